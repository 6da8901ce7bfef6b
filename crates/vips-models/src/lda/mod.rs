//! Private latent Dirichlet allocation (003 Sec. 4, Algorithm 3).
