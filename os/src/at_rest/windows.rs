//! Private files on Windows: a protected access-control list that allows the user alone.
//!
//! The list is written in SDDL, Windows' own text for security descriptors:
//! `D:P(A;OICI;FA;;;<the user's SID>)` on a folder (`P`: nothing inherited from above; `OICI`:
//! files and folders made in it inherit the entry) and `D:P(A;;FA;;;<SID>)` on a file. A path
//! whose list reads otherwise is open to someone else.

use std::ffi::OsStr;
use std::fs::OpenOptions;
use std::io;
use std::os::windows::ffi::OsStrExt;
use std::path::Path;
use std::ptr::null_mut;

use windows_sys::Win32::Foundation::{CloseHandle, LocalFree, ERROR_SUCCESS, HANDLE};
use windows_sys::Win32::Security::Authorization::{
    ConvertSecurityDescriptorToStringSecurityDescriptorW, ConvertSidToStringSidW,
    ConvertStringSecurityDescriptorToSecurityDescriptorW, GetNamedSecurityInfoW, SetNamedSecurityInfoW,
    SDDL_REVISION_1, SE_FILE_OBJECT,
};
use windows_sys::Win32::Security::{
    GetSecurityDescriptorDacl, GetTokenInformation, TokenUser, ACL, DACL_SECURITY_INFORMATION,
    PROTECTED_DACL_SECURITY_INFORMATION, PSECURITY_DESCRIPTOR, TOKEN_QUERY, TOKEN_USER,
};
use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

use super::Kind;

pub fn restrict_umask() {}

pub fn create_dir_all(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)
}

pub fn private_file() -> OpenOptions {
    OpenOptions::new()
}

pub fn make_private(path: &Path, kind: Kind) -> io::Result<()> {
    let wanted = wanted(kind)?;
    let descriptor = Descriptor::parse(&wanted)?;
    let dacl = descriptor.dacl()?;
    let name = wide(path.as_os_str());
    // SAFETY: `name` is NUL-ended; `dacl` lives in `descriptor`, alive across the call.
    let status = unsafe {
        SetNamedSecurityInfoW(
            name.as_ptr(),
            SE_FILE_OBJECT,
            DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION,
            null_mut(),
            null_mut(),
            dacl,
            std::ptr::null(),
        )
    };
    win32(status)
}

/// A file takes its folder's list on Windows: nothing to hand over.
pub fn owned_like_folder(_path: &Path) -> io::Result<()> {
    Ok(())
}

pub fn others_may_read(path: &Path) -> io::Result<Option<String>> {
    let kind = if path.is_dir() { Kind::Folder } else { Kind::File };
    let wanted = wanted(kind)?;
    let current = current_dacl(path)?;
    Ok((current != wanted).then(|| {
        format!(
            "its access list is {current}: make it its owner's alone with icacls \"{}\" /inheritance:r /grant:r %USERNAME%:F",
            path.display()
        )
    }))
}

/// The list a private path of `kind` has, in SDDL.
fn wanted(kind: Kind) -> io::Result<String> {
    let sid = user_sid()?;
    Ok(match kind {
        Kind::Folder => format!("D:P(A;OICI;FA;;;{sid})"),
        Kind::File => format!("D:P(A;;FA;;;{sid})"),
    })
}

/// The access list of `path`, in SDDL.
fn current_dacl(path: &Path) -> io::Result<String> {
    let name = wide(path.as_os_str());
    let mut descriptor: PSECURITY_DESCRIPTOR = null_mut();
    let mut dacl: *mut ACL = null_mut();
    // SAFETY: out-pointers are valid; the descriptor is freed below with LocalFree.
    let status = unsafe {
        GetNamedSecurityInfoW(
            name.as_ptr(),
            SE_FILE_OBJECT,
            DACL_SECURITY_INFORMATION,
            null_mut(),
            null_mut(),
            &mut dacl,
            null_mut(),
            &mut descriptor,
        )
    };
    win32(status)?;
    let mut text: *mut u16 = null_mut();
    // SAFETY: `descriptor` came from GetNamedSecurityInfoW; `text` is freed with LocalFree.
    let ok = unsafe {
        ConvertSecurityDescriptorToStringSecurityDescriptorW(
            descriptor,
            SDDL_REVISION_1,
            DACL_SECURITY_INFORMATION,
            &mut text,
            null_mut(),
        )
    };
    // SAFETY: allocated by the call above, freed once.
    unsafe { LocalFree(descriptor) };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(take_wide(text))
}

/// The SID of the user this process runs as, e.g. `S-1-5-21-...-1001`.
fn user_sid() -> io::Result<String> {
    let mut token: HANDLE = null_mut();
    // SAFETY: the pseudo-handle of this process needs no closing; `token` is closed below.
    if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let mut buffer = vec![0u64; 64];
    let mut length = 0u32;
    // SAFETY: the buffer is 512 bytes, 8-aligned: room and alignment for a TOKEN_USER and its SID.
    let ok = unsafe {
        GetTokenInformation(
            token,
            TokenUser,
            buffer.as_mut_ptr().cast(),
            (buffer.len() * 8) as u32,
            &mut length,
        )
    };
    let error = io::Error::last_os_error();
    // SAFETY: opened above, closed once.
    unsafe { CloseHandle(token) };
    if ok == 0 {
        return Err(error);
    }
    // SAFETY: GetTokenInformation filled the buffer with a TOKEN_USER.
    let user = unsafe { &*(buffer.as_ptr() as *const TOKEN_USER) };
    let mut text: *mut u16 = null_mut();
    // SAFETY: the SID points into `buffer`, alive here; `text` is freed by take_wide.
    if unsafe { ConvertSidToStringSidW(user.User.Sid, &mut text) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(take_wide(text))
}

/// A security descriptor parsed from SDDL, freed on drop.
struct Descriptor(PSECURITY_DESCRIPTOR);

impl Descriptor {
    fn parse(sddl: &str) -> io::Result<Self> {
        let text = wide(OsStr::new(sddl));
        let mut descriptor: PSECURITY_DESCRIPTOR = null_mut();
        // SAFETY: `text` is NUL-ended; the descriptor is freed on drop.
        let ok = unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                text.as_ptr(),
                SDDL_REVISION_1,
                &mut descriptor,
                null_mut(),
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(Self(descriptor))
    }

    /// The access list inside, valid while `self` lives.
    fn dacl(&self) -> io::Result<*mut ACL> {
        let (mut present, mut defaulted) = (0, 0);
        let mut dacl: *mut ACL = null_mut();
        // SAFETY: `self.0` is a valid descriptor; the list points into it.
        if unsafe { GetSecurityDescriptorDacl(self.0, &mut present, &mut dacl, &mut defaulted) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(dacl)
    }
}

impl Drop for Descriptor {
    fn drop(&mut self) {
        // SAFETY: allocated by ConvertStringSecurityDescriptorToSecurityDescriptorW, freed once.
        unsafe { LocalFree(self.0) };
    }
}

fn wide(text: &OsStr) -> Vec<u16> {
    text.encode_wide().chain([0]).collect()
}

/// A NUL-ended UTF-16 string Windows allocated, read and freed.
fn take_wide(text: *mut u16) -> String {
    // SAFETY: `text` is a NUL-ended string from a Windows call that hands it to the caller.
    let value = unsafe {
        let mut length = 0;
        while *text.add(length) != 0 {
            length += 1;
        }
        String::from_utf16_lossy(std::slice::from_raw_parts(text, length))
    };
    // SAFETY: allocated with LocalAlloc by the call that returned it, freed once.
    unsafe { LocalFree(text.cast()) };
    value
}

fn win32(status: u32) -> io::Result<()> {
    if status == ERROR_SUCCESS {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(status as i32))
    }
}
