//! The relay's files at rest (docs/protocol.md §15): tokens, the database, session logs (typed
//! passwords, presigned URLs) and artifacts are the relay's user's alone. The data dir and its
//! folders are `0700`, files `0600`; a tokens file others could read is made private, with a
//! warning, since whoever read it may already hold the tokens.

use std::fs::{DirBuilder, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// Makes every file and folder this process creates from now on its user's alone.
pub fn restrict_umask() {
    // SAFETY: umask only sets the process's file-mode creation mask.
    unsafe {
        libc::umask(0o077);
    }
}

/// Creates `dir` (and its parents) as `0700`; a folder that exists is made `0700`.
pub fn private_dir(dir: &Path) -> io::Result<()> {
    DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    make_private(dir, 0o700)
}

/// Options that create a file as `0600`.
pub fn private_file() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.mode(0o600);
    options
}

/// Writes `bytes` to a new or truncated file only its owner can read.
pub fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let mut file = private_file()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    make_private(path, 0o600)?;
    file.write_all(bytes)
}

/// Takes group and others' access away from `path`. Whether it had any.
fn make_private(path: &Path, mode: u32) -> io::Result<()> {
    loosened(path, mode).map(|_| ())
}

/// Makes an existing `path` `mode` if group or others had access; says whether they had.
pub fn loosened(path: &Path, mode: u32) -> io::Result<bool> {
    let current = std::fs::metadata(path)?.permissions().mode();
    if current & 0o077 == 0 {
        return Ok(false);
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn folders_and_files_are_the_owners_alone() {
        let root = tempfile::tempdir().unwrap();
        let data = root.path().join("data/logs");
        private_dir(&data).unwrap();
        assert_eq!(mode(&data), 0o700);
        std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
        private_dir(&data).unwrap();
        assert_eq!(mode(&data), 0o700);
        let file = data.join("tokens.json");
        std::fs::write(&file, "{}").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(loosened(&file, 0o600).unwrap());
        assert_eq!(mode(&file), 0o600);
        assert!(!loosened(&file, 0o600).unwrap());
        write_private(&data.join("new"), b"x").unwrap();
        assert_eq!(mode(&data.join("new")), 0o600);
    }
}
