//! Private Bayesian logistic regression with Pólya-Gamma augmentation (003 Sec. 5-6, 000 Sec. 6).
