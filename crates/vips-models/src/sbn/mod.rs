//! Private sigmoid belief networks (003 Sec. 7, 000 Appendix B/C).
