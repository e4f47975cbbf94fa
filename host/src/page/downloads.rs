//! The files a tab downloads (docs/protocol.md §17): followed from the tab's
//! `Page.downloadWillBegin` and `Page.downloadProgress` events, and each finished file stored as
//! an artifact, read from where the transport says the browser saved it (`Transport::downloaded`).
//! A tab keeps its latest [`KEPT`] downloads; every change is signalled on one channel for the
//! whole host, so `browser_downloads` can wait across a session's tabs.

use crate::cdp::ours::{EventDownloadProgress, EventDownloadWillBegin};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use serde_json::Value;
use tether_protocol::actions::browser_downloads::{Download, State};
use tokio::sync::watch;

use crate::cdp::Transport;
use crate::parts::artifacts::ArtifactStore;

/// How many downloads a tab keeps: the latest.
pub const KEPT: usize = 100;

/// The largest file the host reads into an artifact. The relay's own limit (64 MiB unless set)
/// usually refuses less; this bounds what one download can make the host hold.
pub const MAX_BYTES: u64 = 512 * 1024 * 1024;

/// One download of the tab, numbered from 1 as it began.
#[derive(Debug, Clone)]
struct Entry {
    seq: u64,
    began: Instant,
    guid: String,
    download: Download,
}

/// A tab's downloads.
#[derive(Default)]
pub struct DownloadLog(Mutex<Inner>);

#[derive(Default)]
struct Inner {
    entries: VecDeque<Entry>,
    /// The seq of the last download begun (0: none yet).
    last: u64,
    /// The seq of the last download a listing showed.
    listed: u64,
}

/// What a change to any tab's downloads is signalled on.
pub type Changes = Arc<watch::Sender<u64>>;

/// What the host needs to store a finished download.
#[derive(Clone)]
pub struct Storing {
    pub transport: Arc<dyn Transport>,
    pub artifacts: Arc<dyn ArtifactStore>,
    pub changes: Changes,
}

impl DownloadLog {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes one of the tab's download events; a finished download is stored in the background.
    pub fn observe(self: &Arc<Self>, method: &str, params: &Value, storing: &Storing) {
        let text = |key: &str| params.get(key).and_then(Value::as_str).unwrap_or_default();
        match method {
            EventDownloadWillBegin::IDENTIFIER => {
                self.begin(text("guid"), text("url"), text("suggestedFilename"))
            }
            EventDownloadProgress::IDENTIFIER => {
                let received = params.get("receivedBytes").and_then(Value::as_u64).unwrap_or(0);
                match text("state") {
                    "completed" => {
                        if self.update(text("guid"), received, None) {
                            let (log, guid, storing) =
                                (self.clone(), text("guid").to_owned(), storing.clone());
                            tokio::spawn(async move { log.store(&guid, &storing).await });
                        }
                    }
                    "canceled" => {
                        self.update(text("guid"), received, Some("the download was cancelled".into()));
                    }
                    _ => {
                        self.update(text("guid"), received, None);
                    }
                }
            }
            _ => return,
        }
        storing.changes.send_modify(|n| *n += 1);
    }

    fn begin(&self, guid: &str, url: &str, name: &str) {
        let mut log = self.lock();
        log.last += 1;
        let entry = Entry {
            seq: log.last,
            began: Instant::now(),
            guid: guid.to_owned(),
            download: Download {
                name: crate::page::numbered::cut(name, tether_protocol::actions::MAX_FILE_NAME_BYTES)
                    .to_owned(),
                bytes: 0,
                mime_type: None,
                url: crate::page::numbered::clipped(url, crate::page::network::URL_KEPT),
                artifact_id: None,
                artifact_url: None,
                state: State::InProgress,
                error: None,
            },
        };
        log.entries.push_back(entry);
        if log.entries.len() > KEPT {
            log.entries.pop_front();
        }
    }

    /// Updates a download in progress; whether the browser just finished it (so it is to be
    /// stored). `failed` ends it with that error.
    fn update(&self, guid: &str, received: u64, failed: Option<String>) -> bool {
        let mut log = self.lock();
        let Some(entry) = log.entries.iter_mut().find(|e| e.guid == guid) else {
            return false;
        };
        if entry.download.state != State::InProgress {
            return false;
        }
        entry.download.bytes = received;
        if let Some(error) = failed {
            entry.download.state = State::Failed;
            entry.download.error = Some(error);
            return false;
        }
        true
    }

    /// Changes the download `guid`, where the tab still keeps it.
    fn set(&self, guid: &str, f: impl FnOnce(&mut Download)) {
        if let Some(entry) = self.lock().entries.iter_mut().find(|e| e.guid == guid) {
            f(&mut entry.download);
        }
    }

    /// Reads the finished file of `guid` into an artifact (removing it where the host's own
    /// staging held it), or lists the download failed saying why.
    async fn store(&self, guid: &str, storing: &Storing) {
        let begun = self
            .lock()
            .entries
            .iter()
            .find(|e| e.guid == guid)
            .map(|e| e.download.clone());
        let stored = match begun {
            Some(begun) => stored(guid, &begun, storing).await,
            None => return,
        };
        self.set(guid, |d| match stored {
            Ok((artifact, bytes, mime)) => {
                d.state = State::Complete;
                d.bytes = bytes;
                d.artifact_id = Some(artifact.artifact_id);
                d.artifact_url = Some(artifact.url);
                d.mime_type = mime;
            }
            Err(error) => {
                d.state = State::Failed;
                d.error = Some(error);
            }
        });
        storing.changes.send_modify(|n| *n += 1);
    }

    /// The downloads after `seq` (all with 0), oldest first.
    pub fn after(&self, seq: u64) -> Vec<Download> {
        self.lock()
            .entries
            .iter()
            .filter(|e| e.seq > seq)
            .map(|e| e.download.clone())
            .collect()
    }

    /// Every download the tab keeps, with when it began, as a listing shows them: from now
    /// on none of them is unlisted.
    pub fn list(&self) -> Vec<(Instant, Download)> {
        let mut log = self.lock();
        log.listed = log.last;
        log.entries
            .iter()
            .map(|e| (e.began, e.download.clone()))
            .collect()
    }

    /// Whether a download began that no listing showed yet.
    pub fn unlisted(&self) -> bool {
        let log = self.lock();
        log.last > log.listed
    }

    /// The seq of the last download begun (0: none yet).
    pub fn last(&self) -> u64 {
        self.lock().last
    }

    /// The guids of the downloads still in progress.
    pub fn in_progress(&self) -> Vec<String> {
        self.lock()
            .entries
            .iter()
            .filter(|e| e.download.state == State::InProgress)
            .map(|e| e.guid.clone())
            .collect()
    }
}

/// The finished file as an artifact: its reference, size and type; or why it is not one.
async fn stored(
    guid: &str,
    begun: &Download,
    storing: &Storing,
) -> Result<(tether_protocol::actions::ArtifactRef, u64, Option<String>), String> {
    let file = storing
        .transport
        .downloaded(guid, &begun.url)
        .await
        .map_err(|e| format!("the downloaded file cannot be found: {e}"))?;
    let read = async {
        let size = tokio::fs::metadata(&file.path)
            .await
            .map_err(|e| e.to_string())?
            .len();
        if size > MAX_BYTES {
            return Err(format!(
                "the file is {size} bytes, over the {MAX_BYTES} a download may have"
            ));
        }
        tokio::fs::read(&file.path).await.map_err(|e| e.to_string())
    };
    let bytes = read.await;
    if file.staged {
        let _ = tokio::fs::remove_file(&file.path).await;
    }
    let bytes = bytes.map_err(|e| format!("the downloaded file cannot be read: {e}"))?;
    let size = bytes.len() as u64;
    let mime = file.mime_type.or_else(|| mime_of(&begun.name).map(str::to_owned));
    let artifact = storing
        .artifacts
        .put(bytes, mime.as_deref().unwrap_or("application/octet-stream"))
        .await
        .map_err(|e| e.message)?;
    Ok((artifact, size, mime))
}

/// The type of a file by its name's extension, for the common ones.
fn mime_of(name: &str) -> Option<&'static str> {
    let extension = name.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match extension.as_str() {
        "pdf" => "application/pdf",
        "txt" => "text/plain",
        "csv" => "text/csv",
        "json" => "application/json",
        "html" | "htm" => "text/html",
        "zip" => "application/zip",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tab_keeps_its_latest_downloads_in_the_order_they_began() {
        let log = DownloadLog::default();
        for n in 0..KEPT + 3 {
            log.begin(&format!("g{n}"), "https://example.test/f", &format!("f{n}.txt"));
        }
        let kept = log.after(0);
        assert_eq!(kept.len(), KEPT);
        assert_eq!(kept[0].name, "f3.txt");
        assert_eq!(log.last(), (KEPT + 3) as u64);
        assert_eq!(log.after(log.last() - 1).len(), 1);
    }

    #[test]
    fn a_cancelled_download_is_failed_and_stays_so() {
        let log = DownloadLog::default();
        log.begin("g", "https://example.test/f", "f.txt");
        assert!(!log.update("g", 5, Some("cancelled".into())));
        assert!(
            !log.update("g", 9, None),
            "a finished download is not finished again"
        );
        let listed = &log.after(0)[0];
        assert_eq!((listed.state, listed.bytes), (State::Failed, 5));
        assert!(log.in_progress().is_empty());
    }
}
