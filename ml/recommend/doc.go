// Package recommend is collaborative filtering by alternating least
// squares: Spark ML's ALS and ALSModel, on package ml's Estimator/Model
// API, in one process or over the ranks of a job.
//
// # The model
//
// Ratings r_ui of users u for items i are approximated by x_u·y_i, with a
// factor of Rank values per user (X) and per item (Y). Each iteration
// solves every user factor with the item factors fixed, then every item
// factor with the user factors fixed (the order of Zhou et al. and of the
// numpy peer job6_als.py; MLlib solves the items first — on the anchors'
// 10M set, starting from random item factors reaches in 10 iterations the
// test RMSE the other order needs about 25 for); each solve is a small
// least-squares problem of its own.
//
// Explicit feedback (ALS-WR, Zhou et al. 2008, as MLlib): user u with the
// n_u ratings R_u gets
//
//	(Σ_{i∈R_u} y_i y_iᵀ + λ·n_u·I) x_u = Σ_{i∈R_u} r_ui·y_i,
//
// λ = RegParam scaled by the number of ratings (items likewise).
//
// Implicit feedback (Hu, Koren and Volinsky 2008, with MLlib's extension
// to ratings ≤ 0): preference p_ui = [r_ui > 0], confidence
// c_ui = 1 + α|r_ui| (1 where u did not rate i), and
//
//	(YᵀY + Σ_{i∈R_u} (c_ui − 1)·y_i y_iᵀ + λ·n⁺_u·I) x_u = Σ_{i∈R_u} c_ui·p_ui·y_i,
//
// n⁺_u the number of positive ratings: YᵀY, computed once per half
// iteration, stands for the sum over every item, so a solve costs the
// user's own ratings only.
//
// Each system is solved by a Cholesky factorization (rank × rank,
// hand-written: for rank 10 a general LAPACK-style routine costs more in
// calls than in flops); with Nonnegative, by Lawson and Hanson's active-set
// NNLS on the same normal equations (MLlib uses a projected gradient
// method; the minimizer is the same).
//
// # Blocking and speed
//
// The ratings are indexed once: the ids of each side become dense
// indices (in id order), and the ratings are laid out twice as compressed
// rows, by user and by item, each row's ratings in the order of the other
// side's indices (three counting-sort scatters). The entities of each
// side are cut into NumUserBlocks (NumItemBlocks) contiguous blocks;
// within a process the solves run over both cores in chunks of entities
// (internal/parallel), each worker with its own scratch. Building a
// system is the cost: for every rating one factor row is fetched and
// Rank² multiply-adds done. With AVX-512 (internal/cpufeat) and Rank ≤ 12
// the factors are stored with a zero-padded row of 8 or 16 float64s and
// the Gram kernels of internal/kernel (kernel.Gram, AVX-512 assembly
// generated with avo) keep the whole
// Gram matrix and right-hand side in zmm registers, using embedded
// broadcasts, and prefetch the factor rows of the ratings ahead; other
// ranks and builds gather the rated factors column by column and take
// every entry as one dot product (kernel.DotF64). Everything is float64.
//
// # Distribution
//
// Fit takes a Data: each rank's share of the ratings, any split. The
// ranks all-gather their distinct ids (every rank then has the same
// index), and block b of a side belongs to rank b mod the number of
// ranks. The ratings are sent to the ranks that own their user and their
// item (the Comm has no all-to-all: the ranks all-gather bounded chunks of
// ratings and each keeps its own). Each half iteration, every rank solves
// its blocks and the ranks all-gather the new factors, so every rank holds
// all factors; FitStats reports the bytes sent and received per iteration
// against the size of the factors. The initial factor of an id is drawn
// from (Seed, side, id) alone and every system is summed in the same
// canonical order, so the factors on any number of ranks are those of one
// process (bit for bit in practice; the tests allow 1e-9 relative).
//
// # Input
//
// Frames with integer id columns (int64, or floats holding integers: a
// fractional id is an error naming the row) and a numeric rating column;
// or Ratings directly, for instance from the compact binary files of the
// anchors' gen_ratings.py (ReadBinary, memory-mapped).
//
// # The fitted model
//
// ALSModel.Transform adds the prediction x_u·y_i; an id not seen in the
// ratings is a cold start: a NaN prediction (ColdStartStrategy "nan") or
// a dropped row ("drop"). RecommendForAllUsers/Items(k) score blocks of
// BlockSize users (items) against all items (users) with one GEMM each
// and keep the top k. The model saves and loads with ml.SaveModel and
// ml.LoadModel (the ids and both factor matrices).
//
//	e := recommend.NewALS() // rank 10, maxIter 10, regParam 0.1, as Spark
//	m, err := e.Fit(ml.Local(frame))
//	preds, err := m.Transform(test)
//	top, err := m.(*recommend.ALSModel).RecommendForAllUsers(10)
//
// Sources: Y. Zhou, D. Wilkinson, R. Schreiber, R. Pan, "Large-scale
// parallel collaborative filtering for the Netflix prize", AAIM 2008
// (ALS-WR); Y. Hu, Y. Koren, C. Volinsky, "Collaborative filtering for
// implicit feedback datasets", ICDM 2008; C. L. Lawson, R. J. Hanson,
// "Solving Least Squares Problems", Prentice-Hall 1974, ch. 23 (NNLS);
// Spark MLlib's ALS documentation (parameters, defaults, cold start).
package recommend
