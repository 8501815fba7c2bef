# Reference fits for ml/linear's tests: scikit-learn on small deterministic
# data. Run once with /usr/bin/python3 (scikit-learn 1.2.1, numpy 1.24.2);
# it writes reg.csv and cls.csv here and prints the numbers pinned in
# sklearn_test.go.
import json
import numpy as np
from sklearn.linear_model import LinearRegression, Ridge, ElasticNet, LogisticRegression
from sklearn.svm import LinearSVC

rs = np.random.RandomState(7)

# Regression: 60 rows, 4 features on different scales.
n, p = 60, 4
X = rs.normal(size=(n, p)) * np.array([1.0, 3.0, 0.5, 2.0]) + np.array([0.0, 1.0, -2.0, 5.0])
y = X @ np.array([1.5, -0.7, 2.0, 0.0]) + 3.0 + rs.normal(scale=0.8, size=n)
np.savetxt("reg.csv", np.column_stack([X, y]), delimiter=",", fmt="%.17g")

# Classification: 90 rows, 4 features, 3 classes (y3) and 2 classes (y2).
m = 90
Z = rs.normal(size=(m, p)) * np.array([1.0, 2.0, 0.7, 1.5])
s = Z @ np.array([[1.0, -1.0, 0.5], [0.3, 0.8, -0.6], [-1.2, 0.1, 0.9], [0.2, 0.4, -0.3]]) + rs.normal(scale=1.0, size=(m, 3))
y3 = s.argmax(axis=1)
y2 = (Z @ np.array([1.0, -0.5, 0.8, 0.3]) + rs.normal(scale=1.0, size=m) > 0.2).astype(int)
np.savetxt("cls.csv", np.column_stack([Z, y2, y3]), delimiter=",", fmt="%.17g")

out = {}
def put(name, coef, icpt):
    out[name] = {"coef": np.ravel(coef).tolist(), "intercept": np.ravel(icpt).tolist()}

ols = LinearRegression().fit(X, y)
put("ols", ols.coef_, ols.intercept_)
# OLS standard errors: σ²(AᵀA)⁻¹ with A = [X, 1], σ² = RSS/(n − p − 1).
A = np.column_stack([X, np.ones(n)])
res = y - A @ np.append(ols.coef_, ols.intercept_)
cov = (res @ res / (n - p - 1)) * np.linalg.inv(A.T @ A)
out["ols_se"] = np.sqrt(np.diag(cov)).tolist()
out["ols_r2"] = ols.score(X, y)
ridge = Ridge(alpha=6.0, tol=1e-14).fit(X, y)                           # λ = alpha/n = 0.1
put("ridge", ridge.coef_, ridge.intercept_)
en = ElasticNet(alpha=0.3, l1_ratio=0.5, tol=1e-14, max_iter=1000000).fit(X, y)  # λ = 0.3, α = 0.5
put("enet", en.coef_, en.intercept_)
lasso = ElasticNet(alpha=0.5, l1_ratio=1.0, tol=1e-14, max_iter=1000000).fit(X, y)
put("lasso", lasso.coef_, lasso.intercept_)

C = 0.5  # λ = 1/(C·n) = 1/45
lb = LogisticRegression(C=C, tol=1e-14, max_iter=100000).fit(Z, y2)
put("logreg_binomial", lb.coef_, lb.intercept_)
lm = LogisticRegression(C=C, tol=1e-14, max_iter=100000, multi_class="multinomial").fit(Z, y3)
put("logreg_multinomial", lm.coef_, lm.intercept_)
# Elastic net (saga): C·Σℓ + ρ‖w‖₁ + (1−ρ)/2‖w‖², i.e. λ = 1/(C·n), α = ρ.
le = LogisticRegression(C=C, penalty="elasticnet", l1_ratio=0.6, solver="saga", tol=1e-13, max_iter=10000000).fit(Z, y2)
put("logreg_binomial_enet", le.coef_, le.intercept_)
lme = LogisticRegression(C=0.1, penalty="elasticnet", l1_ratio=0.6, solver="saga", tol=1e-13, max_iter=10000000, multi_class="multinomial").fit(Z, y3)
put("logreg_multinomial_enet", lme.coef_, lme.intercept_)

# The primal solver (trust-region Newton) converges tightly; the dual
# coordinate descent stops short of tol=1e-12. liblinear penalizes its intercept: fit without one on [Z, 1] instead,
# which is the same problem as ours with a column of ones and
# fitIntercept=false.
Z1 = np.column_stack([Z, np.ones(m)])
sv = LinearSVC(C=C, loss="squared_hinge", dual=False, fit_intercept=False, tol=1e-12, max_iter=100000).fit(Z1, y2)
put("svc_binary", sv.coef_, [])
sm = LinearSVC(C=C, loss="squared_hinge", dual=False, fit_intercept=False, tol=1e-12, max_iter=100000).fit(Z1, y3)
put("svc_ovr", sm.coef_, [])
print(json.dumps(out, indent=1))
