//! A child process this program launches (the worker's Chromium): the pipes it is driven
//! over, bound to end with this program, and ended on request.
//!
//! Unix: the pipes are the child's fds 3 and 4, Linux's parent-death signal ends it with its
//! parent, signals end it. Windows: the pipes are inherited handles whose values go on the
//! child's command line, a job object that kills on close ends it with its parent (the job's
//! one handle is this process's, closed by Windows when it exits however it exits), and
//! `TerminateProcess` ends it.

use std::io;
use std::process::{Child, Command};

use tokio::io::{AsyncRead, AsyncWrite};

#[cfg(unix)]
#[path = "process/unix.rs"]
mod imp;
#[cfg(windows)]
#[path = "process/windows.rs"]
mod imp;

/// How to end a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Ask it to end (SIGTERM); on Windows, which has no such request for a program without a
    /// window of ours, the same as [`End::Now`].
    Ask,
    /// End it now (SIGKILL, `TerminateProcess`).
    Now,
}

/// Ends process `pid`, which the caller launched and has not reaped.
pub fn end(pid: u32, how: End) {
    imp::end(pid, how);
}

/// Has the child `command` will start end when this process ends, however this one ends.
/// Call [`bound_to_parent`] with the child once it runs.
pub fn before_spawn(command: &mut Command) {
    imp::before_spawn(command);
}

/// The second half of [`before_spawn`], for the child it started.
pub fn bound_to_parent(child: &Child) {
    imp::bound_to_parent(child);
}

/// Whether this process runs as the superuser (Unix root; never on Windows, where a browser's
/// sandbox works under an administrator too).
pub fn is_superuser() -> bool {
    imp::is_superuser()
}

/// Two pipes for a child that reads commands from one and writes answers to the other.
pub struct ChildPipes {
    to_child: std::io::PipeWriter,
    from_child: std::io::PipeReader,
}

/// The child's ends of [`ChildPipes`], held open until it has started.
pub struct Handed {
    /// On Windows, the values of the child's inherited read and write handles, for its command
    /// line; `None` on Unix, where they are its fds 3 and 4.
    pub handles: Option<(usize, usize)>,
    _ends: Option<(std::io::PipeReader, std::io::PipeWriter)>,
}

impl ChildPipes {
    /// Makes the pipes and has `command`'s child inherit its ends (fds 3 and 4 on Unix).
    /// Keep the [`Handed`] until the child has started, then drop it.
    pub fn new(command: &mut Command) -> io::Result<(Self, Handed)> {
        let (child_in, to_child) = std::io::pipe()?;
        let (from_child, child_out) = std::io::pipe()?;
        let handed = imp::hand_down(command, child_in, child_out)?;
        Ok((Self { to_child, from_child }, handed))
    }

    /// This process's ends, for async use.
    pub fn into_async(
        self,
    ) -> io::Result<(
        impl AsyncWrite + Unpin + Send + 'static,
        impl AsyncRead + Unpin + Send + 'static,
    )> {
        imp::into_async(self.to_child, self.from_child)
    }
}

impl Handed {
    fn new(
        handles: Option<(usize, usize)>,
        ends: Option<(std::io::PipeReader, std::io::PipeWriter)>,
    ) -> Self {
        Self { handles, _ends: ends }
    }
}
