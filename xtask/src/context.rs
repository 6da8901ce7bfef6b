//! What every task knows: where the workspace is, where output goes, which data is available.

use std::path::{Path, PathBuf};

/// Shared settings for one `cargo xtask` invocation.
#[derive(Debug, Clone)]
pub struct Context {
    /// Workspace root (where the top-level Cargo.toml is).
    pub root: PathBuf,
    /// Output directory for the report, figures and plots.
    pub out: PathBuf,
    /// Quick mode: embedded data only, a few minutes on 2 cores.
    pub quick: bool,
    /// Directory of the real data sets, when it exists (never used in quick mode).
    pub data_dir: Option<PathBuf>,
}

impl Context {
    /// Builds the context; resolves the data directory and says clearly when it is absent.
    pub fn new(
        quick: bool,
        data_dir: Option<PathBuf>,
        out: Option<PathBuf>,
    ) -> anyhow::Result<Self> {
        let root = workspace_root();
        let out = out.unwrap_or_else(|| root.join("target").join("xtask"));
        std::fs::create_dir_all(&out)?;
        let data_dir = if quick {
            None
        } else {
            let candidate = data_dir.unwrap_or_else(|| root.join("..").join("shared").join("data"));
            if candidate.is_dir() {
                Some(candidate)
            } else {
                eprintln!(
                    "note: data directory {} does not exist; experiments on real data are skipped \
                     (pass --data-dir DIR to point at the data sets)",
                    candidate.display()
                );
                None
            }
        };
        Ok(Self {
            root,
            out,
            quick,
            data_dir,
        })
    }

    /// A data set directory under the data directory, if present (with a note if not).
    pub fn data_set(&self, name: &str) -> Option<PathBuf> {
        let dir = self.data_dir.as_ref()?.join(name);
        if dir.exists() {
            Some(dir)
        } else {
            eprintln!("note: data set {} is absent; skipped", dir.display());
            None
        }
    }

    /// Path of an output file (plots, JSON) inside the output directory.
    pub fn output(&self, file: &str) -> PathBuf {
        self.out.join(file)
    }

    /// The mode as a word for the report.
    pub fn mode(&self) -> &'static str {
        if self.quick { "quick" } else { "full" }
    }
}

/// The workspace root: the parent of this crate's manifest directory.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}
