//! What the host and the relay share about the machine they run on, each OS's own way behind
//! one API: files and folders that are their user's alone (docs/security.md, "At rest"), a
//! browser process that ends with the program that launched it, the machine's name, how logs
//! are written (text for a person, JSON for a log store) and read settings from a file.
//!
//! Unix does these with modes, `umask`, signals and `prctl`; Windows with an access-control
//! list naming the user alone, a job object and `TerminateProcess`. Nothing outside this crate
//! names a platform's API.

pub mod at_rest;
pub mod config_file;
pub mod logs;
pub mod process;

/// This machine's name, as a person would recognise it in a list of workers.
pub fn host_name() -> String {
    imp::host_name().unwrap_or_else(|| "unknown".into())
}

#[cfg(unix)]
mod imp {
    pub fn host_name() -> Option<String> {
        let mut buf = [0u8; 256];
        // SAFETY: the buffer is valid for its length; gethostname writes at most that much.
        let ok = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0;
        let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
        ok.then(|| String::from_utf8_lossy(&buf[..end]).into_owned())
    }
}

#[cfg(windows)]
mod imp {
    /// Windows keeps the NetBIOS name in the environment of every process.
    pub fn host_name() -> Option<String> {
        std::env::var("COMPUTERNAME").ok().filter(|name| !name.is_empty())
    }
}
