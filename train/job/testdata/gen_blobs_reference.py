# Generates blobs_train.csv and blobs_test.csv (three overlapping Gaussian
# classes in four features) and prints scikit-learn's unpenalized
# multinomial logistic regression on them, the reference numbers pinned in
# TestLBFGSMatchesSklearn (lbfgs_test.go). Run from the repository root:
#   /usr/bin/python3 train/job/testdata/gen_blobs_reference.py
import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss

rng = np.random.default_rng(7)
centers = np.array([[0, 0, 0, 0], [1.5, 1, 0, -0.5], [0, 1.5, 1, 0.5]])


def make(n):
    y = rng.integers(0, 3, n)
    X = centers[y] + rng.normal(0, 1.0, (n, 4))
    return np.round(X, 4), y


Xtr, ytr = make(300)
Xte, yte = make(100)
names = np.array(["a", "b", "c"])
for fn, X, y in [("train/job/testdata/blobs_train.csv", Xtr, ytr), ("train/job/testdata/blobs_test.csv", Xte, yte)]:
    with open(fn, "w") as f:
        f.write("f1,f2,f3,f4,label\n")
        for xi, yi in zip(X, y):
            f.write(",".join("%.4f" % v for v in xi) + "," + names[yi] + "\n")
clf = LogisticRegression(penalty=None, solver="lbfgs", max_iter=10000, tol=1e-12).fit(Xtr, ytr)
print("train logloss", repr(log_loss(ytr, clf.predict_proba(Xtr))))
print("test logloss", repr(log_loss(yte, clf.predict_proba(Xte), labels=[0, 1, 2])))
print("test acc", repr(clf.score(Xte, yte)))
# The softmax is invariant to adding a constant per feature to every
# class: compare coefficients centred over the classes.
np.set_printoptions(precision=10)
print("W", repr(clf.coef_ - clf.coef_.mean(0)))
print("b", repr(clf.intercept_ - clf.intercept_.mean()))
# With scikit-learn's default L2 penalty C = 1, which is fathom's
# weight_decay 1/(C·rows) = 1/300.
clf = LogisticRegression(C=1.0, solver="lbfgs", max_iter=10000, tol=1e-12).fit(Xtr, ytr)
print("C=1 test acc", repr(clf.score(Xte, yte)))
print("C=1 W", repr(clf.coef_ - clf.coef_.mean(0)))
print("C=1 b", repr(clf.intercept_ - clf.intercept_.mean()))
