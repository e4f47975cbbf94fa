//! `browser_upload_file`: fetches the files from the artifact store to this machine, then sets
//! them on the page's file field with `DOM.setFileInputFiles`, which is how Chromium's own
//! chooser hands a person's pick to the page (the page hears `input` and `change`). An element
//! that is not a file field is clicked with the chooser intercepted, and the files go to the
//! field that opened it.

use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::dom::SetFileInputFilesParams;
use chromiumoxide::cdp::browser_protocol::page::{
    EventFileChooserOpened, FileChooserOpenedMode, SetInterceptFileChooserDialogParams,
};
use chromiumoxide::cdp::js_protocol::runtime::RemoteObjectId;
use tether_protocol::actions::browser_click::MouseButton;
use tether_protocol::actions::browser_upload_file::{Output, Params, UploadedFile};
use tether_protocol::{ActionError, ErrorCode};
use tokio::time::Instant;

use super::{required_element, Context};
use crate::page::library::{FileInput, Point};
use crate::page::{NodeOr, Page};
use crate::parts::artifacts::LocalFile;

/// How long a click may take to open a file chooser. Chromium opens it in the click's own
/// task, so this is room for a busy page, not a guess at a timer.
const CHOOSER_WAIT: Duration = Duration::from_secs(3);

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    let at = required_element(&p.xpath, &p.r#ref)?;
    let mut files = Vec::with_capacity(p.artifact_ids.len());
    for id in &p.artifact_ids {
        files.push(cx.artifacts.file(id, cx.session.id).await?);
    }
    let paths: Vec<String> = files.iter().map(|f| f.path.display().to_string()).collect();
    let page = cx.page(p.tab_id);
    let count = files.len();
    match page.call_for_node(&FileInput { at, count }).await? {
        NodeOr::Node(field) => {
            let mut set = SetFileInputFilesParams::new(paths.clone());
            set.object_id = Some(RemoteObjectId::new(field.clone()));
            let set = page.command(set).await;
            page.release(&field).await;
            set.map_err(refused)?;
        }
        NodeOr::Reply(point) => through_chooser(&page, point, &paths).await?,
    }
    Ok(Output {
        files: files.into_iter().map(uploaded).collect(),
    })
}

/// Clicks the element with the file chooser intercepted, and sets the files on the field
/// whose chooser opened.
async fn through_chooser(page: &Page<'_>, point: Point, paths: &[String]) -> Result<(), ActionError> {
    page.command(SetInterceptFileChooserDialogParams::new(true))
        .await
        .map_err(refused)?;
    let picked = async {
        let mut events = page.events();
        page.click_at((point.x, point.y), MouseButton::Left, 1, 0).await?;
        let opened = chooser_opened(&mut events).await?;
        if opened.mode == FileChooserOpenedMode::SelectSingle && paths.len() > 1 {
            return Err(ActionError::invalid_params(format!(
                "the file chooser this click opened takes one file, not {}",
                paths.len()
            )));
        }
        let mut field = SetFileInputFilesParams::new(paths.to_vec());
        field.backend_node_id = opened.backend_node_id;
        page.command(field).await.map_err(refused)?;
        Ok(())
    }
    .await;
    // Later choosers (a person's, in their own browser) open as usual again.
    if let Err(e) = page
        .command(SetInterceptFileChooserDialogParams::new(false))
        .await
    {
        tracing::debug!(tab = page.tab, "cannot stop intercepting file choosers: {e}");
    }
    picked
}

async fn chooser_opened(events: &mut crate::page::TabEvents) -> Result<EventFileChooserOpened, ActionError> {
    let deadline = Instant::now() + CHOOSER_WAIT;
    while let Some((method, params)) = events.next_until(deadline).await? {
        if method == EventFileChooserOpened::IDENTIFIER {
            return serde_json::from_value(params).map_err(|e| {
                ActionError::internal(format!("the browser's file chooser event is unreadable: {e}"))
            });
        }
    }
    Err(ActionError::new(
        ErrorCode::ElementNotInteractable,
        format!(
            "clicking the element opened no file chooser within {} s; give the page's <input type=file> itself (any XPath: hidden ones work too)",
            CHOOSER_WAIT.as_secs()
        ),
    ))
}

/// The browser's refusal to set files, said so that the person can act on it. Chrome refuses
/// `DOM.setFileInputFiles` through `chrome.debugger` with "Not allowed" unless the extension
/// may read local files (seen on Chromium 156 with file access turned off; tests/extension_faults.rs).
fn refused(error: ActionError) -> ActionError {
    if error.code == ErrorCode::CdpError && error.message.contains("Not allowed") {
        return ActionError::new(
            ErrorCode::Forbidden,
            "the browser does not let Tether hand files to pages: turn on \"Allow access to file URLs\" for Tether (chrome://extensions, Tether, Details), then upload again",
        );
    }
    error
}

fn uploaded(file: LocalFile) -> UploadedFile {
    UploadedFile {
        name: file.name,
        bytes: file.bytes,
    }
}
