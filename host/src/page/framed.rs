//! Crossing into a tab's cross-origin frames (docs/protocol.md §16). Each frame's element in
//! the page around it is marked with the frame's id, so the page library says where a frame
//! sits (a snapshot's block, a scan's place, an XPath going into it); a snapshot or scan reads
//! each frame through the frame's own session and puts its content where its element is; and
//! an element action on a ref or XPath inside a frame gets a [`Page`] scoped to that frame
//! (which reads where the frame sits once it moves the pointer).
//! A frame at a URL the session may not touch stays one line, and nothing reaches into it.

use chromiumoxide::cdp::browser_protocol::dom::{GetFrameOwnerParams, ResolveNodeParams};
use chromiumoxide::cdp::browser_protocol::page::FrameId;
use chromiumoxide::cdp::js_protocol::runtime::{
    CallFunctionOnParams, EvaluateParams, ExecutionContextId, RemoteObjectId,
};
use serde_json::{json, Value};
use tether_protocol::actions::browser_snapshot::SnapshotScope;
use tether_protocol::actions::browser_xpath_scan::{self, ScanScope};
use tether_protocol::actions::Element;
use tether_protocol::{ActionError, ErrorCode};

use crate::page::library::{CrossFrame, PageText, Scan, Scanned, Snapshot};
use crate::page::{argument, remote_object_of, FrameScope, Page};
use crate::parts::rules::Rules;

/// How the library's snapshot writes a marked frame's block (`js/snapshot.js`).
const FRAME_BLOCK: &str = "\u{1}frame ";

/// Marks a frame's element with the frame's id (`FRAME_ID` in `js/core.js`).
const MARK: &str =
    "function (id) { Object.defineProperty(this, Symbol.for('tether.frame'), { value: id, configurable: true }); }";

/// Marks the elements of the frames attached since the last look. A frame whose element
/// cannot be found (it went as it was asked for) stays unmarked, and so unread.
pub async fn mark(page: &Page<'_>) {
    for id in page.state().frames.unmarked() {
        if let Err(e) = mark_one(page, &id).await {
            tracing::debug!(tab = page.tab, frame = id, "cannot mark a frame's element: {e}");
        }
    }
}

async fn mark_one(page: &Page<'_>, id: &str) -> Result<(), ActionError> {
    let owner = page.command(GetFrameOwnerParams::new(FrameId::new(id))).await?;
    // Marked in Tether's own world of the page, where the library reads it.
    let world = page.world().await?;
    let resolve = ResolveNodeParams {
        backend_node_id: Some(owner.backend_node_id),
        execution_context_id: Some(ExecutionContextId::new(world)),
        ..ResolveNodeParams::default()
    };
    // Read as JSON: the node's remote object has enums Chromium extends.
    let resolved = page.command_json(resolve).await?;
    let element = resolved
        .pointer("/object/objectId")
        .and_then(Value::as_str)
        .ok_or_else(|| ActionError::internal("the frame's element has no handle"))?;
    let mut marked = CallFunctionOnParams::new(MARK);
    marked.object_id = Some(RemoteObjectId::new(element));
    marked.arguments = Some(vec![argument(json!(id))]);
    remote_object_of(page.command_json(marked).await?)?;
    page.state().frames.set_owner(id, element.to_owned());
    Ok(())
}

/// The page an action on `at` acts on: `page` itself, or the frame `at` is inside (with the
/// rest of its XPath there).
pub async fn reach<'a, 'p>(
    page: Page<'a>,
    rules: &dyn Rules,
    at: Element<'p>,
) -> Result<(Page<'a>, Element<'p>), ActionError> {
    // A ref from a frame was handed out by a snapshot or scan that knew the frame; an XPath
    // into a frame may come before any.
    if matches!(at, Element::Xpath(xpath) if xpath.contains("/#document")) {
        page.caught_up().await?;
    }
    if !page.state().frames.any() {
        return Ok((page, at));
    }
    match at {
        Element::Ref(r#ref) => {
            let number = r#ref[1..].parse::<u64>().unwrap_or_default();
            match page.state().frames.holding(number) {
                Some(id) => {
                    let framed = enter(&page, rules, &id, true)
                        .await
                        .map_err(|e| stale(e, r#ref))?;
                    Ok((framed, at))
                }
                None => Ok((page, at)),
            }
        }
        Element::Xpath(xpath) if xpath.contains("/#document") => {
            mark(&page).await;
            let crossing = page.call(&CrossFrame { xpath }).await?;
            match crossing.frame {
                Some(id) if xpath.ends_with(&crossing.rest) => {
                    let rest = &xpath[xpath.len() - crossing.rest.len()..];
                    let framed = enter(&page, rules, &id, true).await?;
                    Ok((framed, Element::Xpath(rest)))
                }
                _ => Ok((page, at)),
            }
        }
        Element::Xpath(_) => Ok((page, at)),
    }
}

/// The tab's cross-origin frames the session may touch, each as a page scoped to it.
pub async fn each<'a>(page: &Page<'a>, rules: &dyn Rules) -> Vec<Page<'a>> {
    let mut pages = Vec::new();
    for id in page.state().frames.ids() {
        if let Ok(framed) = enter(page, rules, &id, false).await {
            pages.push(framed);
        }
    }
    pages
}

/// A ref into a frame that went away is stale, as one whose element went.
fn stale(error: ActionError, r#ref: &str) -> ActionError {
    match error.code {
        ErrorCode::ForbiddenTarget => error,
        _ => ActionError::new(
            ErrorCode::ElementNotFound,
            format!("ref {ref} is stale: the frame it was in is gone ({}); take a new browser_snapshot (or browser_xpath_scan) for current refs", error.message),
        ),
    }
}

/// `page` scoped to frame `id`, once its URL is one the session may touch; `placed`: for
/// input, which needs the frame's element (its place is read at the first pointer event).
async fn enter<'a>(
    page: &Page<'a>,
    rules: &dyn Rules,
    id: &str,
    placed: bool,
) -> Result<Page<'a>, ActionError> {
    let frames = &page.state().frames;
    let gone = || ActionError::new(ErrorCode::ElementNotFound, "the frame is no longer in the page");
    let session = frames.session(id).ok_or_else(gone)?;
    let owner = match frames.owner(id) {
        Some(owner) => owner,
        None if placed => return Err(gone()),
        None => String::new(),
    };
    let mut location = EvaluateParams::new("location.href");
    location.return_by_value = Some(true);
    let url = crate::cdp::typed::command_json_in(page.transport().as_ref(), page.tab, &session, location)
        .await
        .map_err(|_| gone())?;
    let url = remote_object_of(url)?["value"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    if let Some(why) = rules.refusal(&url) {
        return Err(ActionError::new(
            ErrorCode::ForbiddenTarget,
            format!("the element is in a frame of {url}: {why}"),
        ));
    }
    Ok(page.in_frame(FrameScope {
        id: id.to_owned(),
        session,
        owner,
        url,
    }))
}

/// `call` into the page with its frames' elements marked. The call's answer comes after the
/// tab's events sent before it: a frame the tab's watcher then has that it did not before (it
/// came as the call went) is marked, and the call made again. A page without cross-origin
/// frames pays no round trip for this.
async fn marked_call<T, F, Fut>(page: &Page<'_>, call: F) -> Result<T, ActionError>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<T, ActionError>>,
{
    let frames = &page.state().frames;
    let known = frames.attached();
    mark(page).await;
    let answer = call().await?;
    page.state().caught_up().await;
    if frames.attached() == known {
        return Ok(answer);
    }
    mark(page).await;
    call().await
}

/// The page's snapshot blocks, each marked frame's own blocks in its place (or one line
/// naming its URL, for a frame the session may not touch or that could not be read).
pub async fn snapshot(
    page: &Page<'_>,
    rules: &dyn Rules,
    scope: SnapshotScope,
) -> Result<PageText, ActionError> {
    let mut text = marked_call(page, || {
        page.call_handing_refs(|ref_floor| Snapshot { scope, ref_floor })
    })
    .await?;
    if !page.state().frames.any() {
        return Ok(text);
    }
    let mut blocks = Vec::with_capacity(text.blocks.len());
    for block in std::mem::take(&mut text.blocks) {
        let trimmed = block.trim_start();
        let Some(id) = trimmed.strip_prefix(FRAME_BLOCK) else {
            blocks.push(block);
            continue;
        };
        let indent = &block[..block.len() - trimmed.len()];
        match frame_snapshot(page, rules, id, scope).await {
            Ok(inner) => {
                blocks.push(format!("{indent}[frame {:?}]", inner.url));
                blocks.extend(inner.blocks.iter().map(|b| format!("{indent}{b}")));
                let (gist, more) = (&mut text.gist, &inner.gist);
                gist.links += more.links;
                gist.buttons += more.buttons;
                gist.inputs += more.inputs;
                gist.forms += more.forms;
                gist.dialogs.extend(more.dialogs.iter().cloned());
            }
            Err(line) => blocks.push(format!("{indent}{line}")),
        }
    }
    text.blocks = blocks;
    Ok(text)
}

/// A frame's snapshot, or the line that stands for it.
async fn frame_snapshot(
    page: &Page<'_>,
    rules: &dyn Rules,
    id: &str,
    scope: SnapshotScope,
) -> Result<PageText, String> {
    let framed = enter(page, rules, id, false).await.map_err(|e| match e.code {
        ErrorCode::ForbiddenTarget => format!("[frame: not shown: {}]", e.message),
        _ => "[frame: gone]".to_owned(),
    })?;
    framed
        .call_handing_refs(|ref_floor| Snapshot { scope, ref_floor })
        .await
        .map_err(|e| {
            format!(
                "[frame {:?}: could not be read: {}]",
                framed.frame().map_or("", |f| &f.url),
                e.message
            )
        })
}

/// The page's scan, each marked frame's elements in their place: XPaths through the frame's
/// element, boxes in the tab's viewport.
pub async fn scan(
    page: &Page<'_>,
    rules: &dyn Rules,
    scope: ScanScope,
) -> Result<browser_xpath_scan::Output, ActionError> {
    let Scanned(mut output, spots) = marked_call(page, || {
        page.call_handing_refs(|ref_floor| Scan { scope, ref_floor })
    })
    .await?;
    // From the last, so each frame's place is still where the page said.
    for spot in spots.into_iter().rev() {
        let Ok(framed) = enter(page, rules, &spot.id, false).await else {
            continue;
        };
        let inner = match framed
            .call_handing_refs(|ref_floor| Scan { scope, ref_floor })
            .await
        {
            Ok(Scanned(inner, _)) => inner,
            Err(e) => {
                tracing::debug!(tab = page.tab, frame = spot.id, "cannot scan a frame: {e}");
                continue;
            }
        };
        let elements = inner.elements.into_iter().map(|mut element| {
            element.xpath = format!("{}/#document{}", spot.xpath, element.xpath);
            if let Some(bbox) = &mut element.bbox {
                bbox.x += spot.x;
                bbox.y += spot.y;
            }
            element
        });
        let at = spot.at.min(output.elements.len());
        output.elements.splice(at..at, elements);
    }
    Ok(output)
}
