//! This process's open-file limit: raised once at start, and read by what holds files or
//! sockets open in proportion to it (the listener's connection slots, the session logs kept
//! open). Unix only: Windows has no such per-process limit on handles to raise.

/// Raises this process's open-file limit to its hard limit (a relay serves thousands of
/// sockets; the common soft limit is 1,024). Returns the limit now in force.
#[cfg(unix)]
pub fn raise() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid rlimit for getrlimit to fill and setrlimit to read.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return None;
        }
        let raised = libc::rlimit {
            rlim_cur: limit.rlim_max,
            rlim_max: limit.rlim_max,
        };
        if raised.rlim_cur > limit.rlim_cur && libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
            limit = raised;
        }
    }
    Some(limit.rlim_cur)
}

/// This process's open-file limit (the soft one, in force; `u64::MAX` when unlimited), or
/// `None` when it cannot be read.
#[cfg(unix)]
pub fn limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid rlimit for getrlimit to fill.
    let known = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
    known.then_some(limit.rlim_cur)
}

#[cfg(not(unix))]
pub fn raise() -> Option<u64> {
    None
}

#[cfg(not(unix))]
pub fn limit() -> Option<u64> {
    None
}
