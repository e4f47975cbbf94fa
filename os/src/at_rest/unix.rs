//! Private files on Unix: modes and the umask.

use std::fs::OpenOptions;
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use super::Kind;

pub fn restrict_umask() {
    // SAFETY: umask only sets the process's file-mode creation mask.
    unsafe {
        libc::umask(0o077);
    }
}

/// Creates `dir` and the parents it lacks as `0700`.
pub fn create_dir_all(dir: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
}

pub fn private_file() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.mode(0o600);
    options
}

/// Takes group and others' access away from `path`.
pub fn make_private(path: &Path, kind: Kind) -> io::Result<()> {
    let current = std::fs::metadata(path)?.permissions().mode();
    if current & 0o077 == 0 {
        return Ok(());
    }
    let mode = match kind {
        Kind::Folder => 0o700,
        Kind::File => 0o600,
    };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

pub fn others_may_read(path: &Path) -> io::Result<Option<String>> {
    let mode = std::fs::metadata(path)?.permissions().mode() & 0o777;
    Ok((mode & 0o077 != 0).then(|| {
        format!(
            "mode {mode:o}: make it its owner's alone with chmod 600 {}",
            path.display()
        )
    }))
}

/// Gives `path` its folder's owner when this process is root and the folder is another's.
pub fn owned_like_folder(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    if !crate::process::is_superuser() {
        return Ok(());
    }
    let Some(folder) = path.parent().filter(|p| !p.as_os_str().is_empty()) else {
        return Ok(());
    };
    let owner = std::fs::metadata(folder)?;
    if owner.uid() == 0 {
        return Ok(());
    }
    std::os::unix::fs::chown(path, Some(owner.uid()), Some(owner.gid()))
}
