# The scikit-learn numbers pinned in ml/eval/peer_test.go.
# Run once with /usr/bin/python3 (scikit-learn 1.2.1, numpy 1.24.2).
import numpy as np
from sklearn.metrics import (roc_auc_score, average_precision_score, precision_recall_curve,
                             f1_score, accuracy_score, precision_score, recall_score, fbeta_score,
                             log_loss, hamming_loss, r2_score, mean_squared_error,
                             mean_absolute_error)

# Binary: scores with ties, labels, weights.
score = np.array([0.9, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.4, 0.3, 0.3, 0.2, 0.1])
label = np.array([1, 1, 0, 1, 0, 1, 0, 0, 1, 0, 0, 0])
weight = np.array([1.0, 2.0, 0.5, 1.0, 1.5, 1.0, 3.0, 1.0, 0.25, 1.0, 2.0, 1.0])
print("roc_auc", repr(roc_auc_score(label, score)))
print("roc_auc weighted", repr(roc_auc_score(label, score, sample_weight=weight)))
print("average_precision (not Spark's areaUnderPR)", repr(average_precision_score(label, score)))


def spark_pr(label, score, weight=None):
    # Spark's areaUnderPR from scikit-learn's curve: drop the (recall 0,
    # precision 1) point scikit-learn appends, put Spark's (0, p1) first,
    # and sum trapezoids.
    p, r, _ = precision_recall_curve(label, score, sample_weight=weight)
    p, r = p[:-1][::-1], r[:-1][::-1]
    x = np.concatenate([[0.0], r])
    y = np.concatenate([[p[0]], p])
    return np.sum((x[1:] - x[:-1]) * (y[1:] + y[:-1]) / 2)


print("Spark areaUnderPR from sklearn's curve", repr(spark_pr(label, score)))
print("Spark areaUnderPR from sklearn's curve, weighted", repr(spark_pr(label, score, weight)))

# Multiclass: labels 0..3, class 3 only ever predicted, never a label.
y = np.array([0, 1, 2, 2, 1, 0, 0, 2, 1, 1, 2, 0, 2, 1])
p = np.array([0, 2, 2, 1, 1, 0, 1, 2, 1, 3, 2, 0, 0, 1])
w = np.array([1.0, 0.5, 2.0, 1.0, 1.0, 3.0, 1.0, 1.0, 0.25, 1.0, 1.5, 1.0, 1.0, 2.0])
print("f1 weighted", repr(f1_score(y, p, average="weighted")))
print("f1 weighted, sample weights", repr(f1_score(y, p, average="weighted", sample_weight=w)))
print("accuracy", repr(accuracy_score(y, p)), "weighted", repr(accuracy_score(y, p, sample_weight=w)))
print("precision weighted", repr(precision_score(y, p, average="weighted", zero_division=0)))
print("recall weighted", repr(recall_score(y, p, average="weighted")))
print("f0.5 weighted", repr(fbeta_score(y, p, beta=0.5, average="weighted")))
print("precision, recall, f1 of class 2", repr(precision_score(y, p, labels=[2], average=None)),
      repr(recall_score(y, p, labels=[2], average=None)), repr(f1_score(y, p, labels=[2], average=None)))
print("hamming", repr(hamming_loss(y, p)))
prob = np.array([
    [0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.2, 0.2, 0.6], [0.25, 0.5, 0.25],
    [0.0, 1.0, 0.0],  # a certain, right answer
    [0.0, 0.5, 0.5],  # a certain, wrong one: clipped at eps
    [0.4, 0.45, 0.15], [0.05, 0.15, 0.8], [0.3, 0.6, 0.1], [0.2, 0.3, 0.5],
    [0.1, 0.1, 0.8], [0.9, 0.05, 0.05], [0.5, 0.1, 0.4], [0.15, 0.7, 0.15],
])
print("log_loss", repr(log_loss(y, prob, eps=1e-15)), "weighted", repr(log_loss(y, prob, eps=1e-15, sample_weight=w)))

# Regression.
t = np.array([3.0, -0.5, 2.0, 7.0, 4.5, 1.0, 0.0, 5.5])
q = np.array([2.5, 0.0, 2.0, 8.0, 4.0, 1.5, -1.0, 5.0])
v = np.array([1.0, 2.0, 0.5, 1.0, 3.0, 1.0, 1.0, 0.25])
print("rmse", repr(np.sqrt(mean_squared_error(t, q))), "mse", repr(mean_squared_error(t, q)),
      "mae", repr(mean_absolute_error(t, q)), "r2", repr(r2_score(t, q)))
print("weighted mse", repr(mean_squared_error(t, q, sample_weight=v)), "mae",
      repr(mean_absolute_error(t, q, sample_weight=v)))
print("explained variance (Spark's var) sum((q-mean t)^2)/n", repr(np.mean((q - t.mean()) ** 2)))
