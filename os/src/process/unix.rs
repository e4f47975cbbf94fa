//! Child processes on Unix: fds 3 and 4, the parent-death signal, signals.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};

use tokio::io::{AsyncRead, AsyncWrite};

use super::{End, Handed};

pub fn end(pid: u32, how: End) {
    let signal = match how {
        End::Ask => libc::SIGTERM,
        End::Now => libc::SIGKILL,
    };
    // SAFETY: kill only sends a signal; the caller has not reaped `pid`, so it is its child.
    unsafe {
        libc::kill(pid as i32, signal);
    }
}

#[cfg(target_os = "linux")]
pub fn before_spawn(command: &mut Command) {
    // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec here. The
    // signal follows the forking *thread*: the caller forks from a thread that lives as long
    // as the child.
    unsafe {
        command.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
}

/// macOS has no parent-death signal; the worker ends its browser as it ends (`close`).
#[cfg(not(target_os = "linux"))]
pub fn before_spawn(_command: &mut Command) {}

pub fn bound_to_parent(_child: &Child) {}

pub fn is_superuser() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

pub fn hand_down(
    command: &mut Command,
    child_in: io::PipeReader,
    child_out: io::PipeWriter,
) -> io::Result<Handed> {
    let (read_end, write_end) = (child_in.as_raw_fd(), child_out.as_raw_fd());
    // The child's ends are moved into the hook so they stay open until the fork; they are
    // close-on-exec, and dup2 gives the child copies at 3 and 4 without that flag.
    let held = (child_in, child_out);
    // SAFETY: fcntl and dup2 are async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        command.pre_exec(move || {
            let _ = &held;
            // Out of the way of 3 and 4 first, so neither dup2 overwrites the other's source.
            let r = libc::fcntl(read_end, libc::F_DUPFD_CLOEXEC, 5);
            let w = libc::fcntl(write_end, libc::F_DUPFD_CLOEXEC, 5);
            if r < 0 || w < 0 || libc::dup2(r, 3) < 0 || libc::dup2(w, 4) < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
    Ok(Handed::new(None, None))
}

pub fn into_async(
    to_child: io::PipeWriter,
    from_child: io::PipeReader,
) -> io::Result<(
    impl AsyncWrite + Unpin + Send + 'static,
    impl AsyncRead + Unpin + Send + 'static,
)> {
    let to_child = tokio::net::unix::pipe::Sender::from_owned_fd(OwnedFd::from(to_child))?;
    let from_child = tokio::net::unix::pipe::Receiver::from_owned_fd(OwnedFd::from(from_child))?;
    Ok((to_child, from_child))
}
