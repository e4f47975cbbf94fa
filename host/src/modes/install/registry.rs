//! Where Chrome-family browsers on Windows look for a native-messaging host: a key under
//! `HKEY_CURRENT_USER` per browser whose default value is the path of the host's manifest.
//! The calls are behind [`Registry`], so the layout install writes is tested on every OS
//! ([`Memory`]) and the real calls ([`CurrentUser`], Windows only) under Wine.

use std::collections::BTreeMap;
use std::io;
use std::sync::Mutex;

use super::{Browser, HOST_NAME};

/// The per-user registry, as install and uninstall use it.
pub trait Registry {
    /// Makes `HKCU\<key>` if it is missing and sets its default value.
    fn set_default(&self, key: &str, value: &str) -> io::Result<()>;
    /// Deletes `HKCU\<key>` (a leaf); whether it was there.
    fn delete(&self, key: &str) -> io::Result<bool>;
}

/// The key each browser reads for host `HOST_NAME` (Chrome's channels share Chrome's).
pub fn keys(browser: Browser) -> Vec<String> {
    let vendors = [
        (Browser::Chrome, r"Software\Google\Chrome"),
        (Browser::Chromium, r"Software\Chromium"),
        (Browser::Edge, r"Software\Microsoft\Edge"),
        (Browser::Brave, r"Software\BraveSoftware\Brave-Browser"),
    ];
    vendors
        .iter()
        .filter(|(b, _)| browser == Browser::All || *b == browser)
        .map(|(_, vendor)| format!(r"{vendor}\NativeMessagingHosts\{HOST_NAME}"))
        .collect()
}

/// A registry in memory: what the real one would hold after the same calls.
#[derive(Default)]
pub struct Memory {
    pub values: Mutex<BTreeMap<String, String>>,
}

impl Registry for Memory {
    fn set_default(&self, key: &str, value: &str) -> io::Result<()> {
        let mut values = self.values.lock().unwrap_or_else(|p| p.into_inner());
        values.insert(key.to_owned(), value.to_owned());
        Ok(())
    }

    fn delete(&self, key: &str) -> io::Result<bool> {
        let mut values = self.values.lock().unwrap_or_else(|p| p.into_inner());
        Ok(values.remove(key).is_some())
    }
}

/// The registry of the user this process runs as.
#[cfg(windows)]
pub struct CurrentUser;

#[cfg(windows)]
impl Registry for CurrentUser {
    fn set_default(&self, key: &str, value: &str) -> io::Result<()> {
        let hkcu = winreg::RegKey::predef(winreg::enums::HKEY_CURRENT_USER);
        let (opened, _) = hkcu.create_subkey(key)?;
        opened.set_value("", &value)
    }

    fn delete(&self, key: &str) -> io::Result<bool> {
        let hkcu = winreg::RegKey::predef(winreg::enums::HKEY_CURRENT_USER);
        match hkcu.delete_subkey(key) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }
}
