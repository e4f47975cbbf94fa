//! Files at rest that are their user's alone (docs/protocol.md §15, docs/security.md "At
//! rest"): tokens, the relay's database and logs, the host's config, profiles and secrets.
//!
//! On Unix: folders `0700`, files `0600`, and a `umask` of `077` for everything else a
//! process creates. On Windows: a protected access-control list that names the user alone
//! (no inherited entries, no Users or Everyone), set on a folder so that every file made in it
//! inherits it; Windows has no umask, so a file is private by the folder it is made in.

use std::fs::OpenOptions;
use std::io;
use std::path::Path;

#[cfg(unix)]
#[path = "at_rest/unix.rs"]
mod imp;
#[cfg(windows)]
#[path = "at_rest/windows.rs"]
mod imp;

/// Makes every file and folder this process creates from now on its user's alone (Unix); on
/// Windows a file takes its folder's list, so this does nothing there.
pub fn restrict_umask() {
    imp::restrict_umask();
}

/// Creates `dir` (and its parents) as its user's alone; a folder that exists is made so.
pub fn private_dir(dir: &Path) -> io::Result<()> {
    imp::create_dir_all(dir)?;
    imp::make_private(dir, Kind::Folder)
}

/// Options that create a file as its user's alone (`0600`; on Windows, in a private folder).
pub fn private_file() -> OpenOptions {
    imp::private_file()
}

/// Writes `bytes` to a new or truncated file only its owner can read. Written by root into a
/// folder of another user (`tether-relay host-token` run as root on a service's data dir),
/// the file is that user's: the service could not read a root's file.
pub fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let mut file = private_file()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    imp::make_private(path, Kind::File)?;
    imp::owned_like_folder(path)?;
    file.write_all(bytes)
}

/// Makes an existing `path` its user's alone if anyone else had access; says whether they had
/// (whoever read it then may already hold what it keeps).
pub fn loosened(path: &Path) -> io::Result<bool> {
    let kind = if path.is_dir() { Kind::Folder } else { Kind::File };
    if imp::others_may_read(path)?.is_none() {
        return Ok(false);
    }
    imp::make_private(path, kind)?;
    Ok(true)
}

/// Whether anyone besides its owner may read `path`: what a person sees and how to mend it
/// (`None`: nobody).
pub fn others_may_read(path: &Path) -> io::Result<Option<String>> {
    imp::others_may_read(path)
}

/// What a path is, for the access it is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Folder,
    File,
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

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
        assert!(others_may_read(&file).unwrap().unwrap().contains("644"));
        assert!(loosened(&file).unwrap());
        assert_eq!(mode(&file), 0o600);
        assert!(!loosened(&file).unwrap());
        assert_eq!(others_may_read(&file).unwrap(), None);
        write_private(&data.join("new"), b"x").unwrap();
        assert_eq!(mode(&data.join("new")), 0o600);
    }

    #[test]
    fn a_file_root_writes_in_another_users_folder_is_that_users() {
        use std::os::unix::fs::MetadataExt;
        if !crate::process::is_superuser() {
            eprintln!("not root: nothing to check");
            return;
        }
        let root = tempfile::tempdir().unwrap();
        let service = root.path().join("service");
        private_dir(&service).unwrap();
        std::os::unix::fs::chown(&service, Some(65534), Some(65534)).unwrap();
        write_private(&service.join("tokens.json"), b"{}").unwrap();
        let file = std::fs::metadata(service.join("tokens.json")).unwrap();
        assert_eq!((file.uid(), file.gid()), (65534, 65534));
        write_private(&root.path().join("mine"), b"x").unwrap();
        assert_eq!(
            std::fs::metadata(root.path().join("mine")).unwrap().uid(),
            0,
            "root's own folder"
        );
    }
}
