//! Child processes on Windows: inherited pipe handles, a job object, `TerminateProcess`.

use std::io;
use std::os::windows::io::{AsRawHandle, OwnedHandle};
use std::process::{Child, Command};
use std::sync::OnceLock;

use tokio::io::{AsyncRead, AsyncWrite};
use windows_sys::Win32::Foundation::{CloseHandle, SetHandleInformation, HANDLE, HANDLE_FLAG_INHERIT};
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JobObjectExtendedLimitInformation, SetInformationJobObject,
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
};
use windows_sys::Win32::System::Threading::{OpenProcess, TerminateProcess, PROCESS_TERMINATE};

use super::{End, Handed};

pub fn end(pid: u32, _how: End) {
    // SAFETY: the handle is checked and closed; the caller has not reaped `pid` (its `Child`
    // holds the process's handle open), so the id is still its child's.
    unsafe {
        let process = OpenProcess(PROCESS_TERMINATE, 0, pid);
        if !process.is_null() {
            TerminateProcess(process, 1);
            CloseHandle(process);
        }
    }
}

pub fn before_spawn(_command: &mut Command) {}

/// Puts the child in this process's kill-on-close job: when this process exits, Windows closes
/// the job's handle and ends every process in it.
pub fn bound_to_parent(child: &Child) {
    let Some(job) = job() else { return };
    // SAFETY: both handles are valid: the job lives as long as this process, the child's as
    // long as `child`.
    if unsafe { AssignProcessToJobObject(job.0, child.as_raw_handle() as HANDLE) } == 0 {
        let error = io::Error::last_os_error();
        tracing::warn!("cannot bind the browser to this process's lifetime: {error}");
    }
}

struct Job(HANDLE);
// SAFETY: a job handle may be used from any thread.
unsafe impl Send for Job {}
unsafe impl Sync for Job {}

/// This process's one job object, made on first use and never closed.
fn job() -> Option<&'static Job> {
    static JOB: OnceLock<Option<Job>> = OnceLock::new();
    JOB.get_or_init(|| {
        // SAFETY: a new unnamed job with default security; the limits struct is zeroed and
        // sized for the call.
        unsafe {
            let job = CreateJobObjectW(std::ptr::null(), std::ptr::null());
            if job.is_null() {
                return None;
            }
            let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = std::mem::zeroed();
            limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
            let set = SetInformationJobObject(
                job,
                JobObjectExtendedLimitInformation,
                (&limits as *const JOBOBJECT_EXTENDED_LIMIT_INFORMATION).cast(),
                std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            );
            (set != 0).then_some(Job(job))
        }
    })
    .as_ref()
}

pub fn is_superuser() -> bool {
    false
}

/// Makes the child's ends inheritable: Windows hands a child every inheritable handle of its
/// parent at the same values, and the child is told those values on its command line. Another
/// child started by this process at the same moment would inherit them too; Tether starts
/// children only when it launches a browser.
pub fn hand_down(
    _command: &mut Command,
    child_in: io::PipeReader,
    child_out: io::PipeWriter,
) -> io::Result<Handed> {
    for handle in [child_in.as_raw_handle(), child_out.as_raw_handle()] {
        // SAFETY: the handle is valid, owned by the pipe ends held in the returned `Handed`.
        if unsafe { SetHandleInformation(handle as HANDLE, HANDLE_FLAG_INHERIT, HANDLE_FLAG_INHERIT) } == 0 {
            return Err(io::Error::last_os_error());
        }
    }
    let handles = (
        child_in.as_raw_handle() as usize,
        child_out.as_raw_handle() as usize,
    );
    Ok(Handed::new(Some(handles), Some((child_in, child_out))))
}

/// Anonymous pipes on Windows do no overlapped I/O, so each end is read and written on
/// tokio's blocking pool (a thread per end while it waits).
pub fn into_async(
    to_child: io::PipeWriter,
    from_child: io::PipeReader,
) -> io::Result<(
    impl AsyncWrite + Unpin + Send + 'static,
    impl AsyncRead + Unpin + Send + 'static,
)> {
    let to_child = tokio::fs::File::from_std(std::fs::File::from(OwnedHandle::from(to_child)));
    let from_child = tokio::fs::File::from_std(std::fs::File::from(OwnedHandle::from(from_child)));
    Ok((to_child, from_child))
}
