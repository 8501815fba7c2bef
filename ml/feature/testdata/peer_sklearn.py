# The scikit-learn numbers pinned in ml/feature/peer_test.go.
# Run once with /usr/bin/python3 (scikit-learn 1.2.1, numpy 1.24.2).
import numpy as np
from sklearn.preprocessing import StandardScaler, MinMaxScaler, MaxAbsScaler, OneHotEncoder
from sklearn.impute import SimpleImputer

np.set_printoptions(precision=17, floatmode="unique")
X = np.array([
    [1.5, -2.0, 10.0],
    [2.25, 0.5, 12.0],
    [-0.75, 3.0, 9.0],
    [4.0, 1.25, 15.0],
    [0.5, -1.5, 11.0],
    [3.0, 2.75, 8.0],
    [1.0, 0.0, 13.5],
])
s = StandardScaler().fit(X)
print("StandardScaler mean_", repr(s.mean_))
print("StandardScaler scale_ (population std)", repr(s.scale_))
print("sample std (ddof=1)", repr(X.std(axis=0, ddof=1)))
print("StandardScaler(with_mean) transform row 0 and 3", repr(s.transform(X)[[0, 3]]))
m = MinMaxScaler(feature_range=(-1, 2)).fit(X)
print("MinMaxScaler(-1,2) transform", repr(m.transform(X)))
print("MaxAbsScaler transform", repr(MaxAbsScaler().fit(X).transform(X)))

cats = np.array([[0], [2], [1], [2], [0], [3], [2]], dtype=float)
print("OneHotEncoder", repr(OneHotEncoder(sparse_output=False).fit_transform(cats)))

nan = np.nan
col = np.array([[2.0], [nan], [7.0], [3.0], [nan], [3.0], [10.0], [1.0], [nan], [5.0], [4.0], [6.0]])  # 9 present values: an odd count, where the medians agree
for strat in ["mean", "median", "most_frequent"]:
    print("SimpleImputer", strat, repr(SimpleImputer(strategy=strat).fit(col).statistics_))

from sklearn.preprocessing import Normalizer, Binarizer
for norm in ["l1", "l2", "max"]:
    print("Normalizer", norm, "rows 0 and 2", repr(Normalizer(norm=norm).fit_transform(X)[[0, 2]]))
print("Binarizer(threshold=1.0) rows 0 and 2", repr(Binarizer(threshold=1.0).fit_transform(X)[[0, 2]]))
