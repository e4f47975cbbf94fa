//! `browser_drag`: a person's drag with real pointer events. The pointer moves to the start,
//! presses, moves in `steps` to the end and releases there. Widgets that follow the pointer
//! (sliders, sortable lists, resize handles, canvases) see mouse and pointer events all the
//! way. An HTML5 drag (`draggable`) is different: once the page's `dragstart` goes through,
//! the browser would start a drag of the operating system, which a headless or debugged
//! browser never finishes; with `Input.setInterceptDrags` the browser hands the drag's data to
//! the host instead, and the rest of the way is `Input.dispatchDragEvent` (enter, over, drop),
//! so `dragenter`, `dragover`, `drop` and `dragend` fire with the page's own `DataTransfer`.

use std::time::Duration;

use chromiumoxide::cdp::browser_protocol::input::{
    DispatchDragEventParams, DispatchDragEventType, DispatchMouseEventType, DragData, EventDragIntercepted,
    SetInterceptDragsParams,
};
use serde_json::Value;
use tether_protocol::actions::browser_click::MouseButton;
use tether_protocol::actions::browser_drag::{Output, Params, Spot};
use tether_protocol::actions::fields::{ElementSeen, Point};
use tether_protocol::{ActionError, ErrorCode};
use tokio::time::Instant;

use super::Context;
use crate::page::library::{ArmDrag, ClickPoint, DragStarted, DropPoint, HitAt, Landing};
use crate::page::{Page, TabEvents};

/// How long the browser may take to hand over a drag the page started.
const INTERCEPT_WAIT: Duration = Duration::from_secs(2);

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    let (page, start) = match p.start().map_err(ActionError::invalid_params)? {
        Spot::At(at) => {
            let (page, at) = cx.reach(p.tab_id, at).await?;
            (page, Spot::At(at))
        }
        start => (cx.page(p.tab_id), start),
    };
    let end = p.end().map_err(ActionError::invalid_params)?;
    page.call(&ArmDrag {}).await?;
    let from = pointer_on(&page, start).await?;
    // Points are the frame's, where the drag is inside one; the wire's are the tab's.
    let (ox, oy) = page.offset().await?;
    let to = match end {
        Spot::At(at) => {
            let (ending, at) = cx.reach(p.tab_id, at).await?;
            if ending.frame().map(|f| &f.id) != page.frame().map(|f| &f.id) {
                return Err(ActionError::new(
                    ErrorCode::Unsupported,
                    "a drag from one frame into another (a cross-origin frame and the page around it) cannot be made; drag within one, or to a point (toX, toY)",
                ));
            }
            let point = page.call(&DropPoint { at }).await?;
            (point.x, point.y)
        }
        Spot::Point(x, y) => page.inside_viewport(x, y).await?,
        Spot::By(dx, dy) => page.inside_viewport(ox + from.0 + dx, oy + from.1 + dy).await?,
    };
    page.mouse(
        DispatchMouseEventType::MousePressed,
        from,
        Some(MouseButton::Left),
        1,
    )
    .await?;
    if let Some(hold) = p.hold_ms.filter(|ms| *ms > 0) {
        // The drag's own pause (a long press), not a wait for anything.
        tokio::time::sleep(Duration::from_millis(hold)).await;
    }
    let intercepting = intercept(&page, true).await;
    let dragged = moves(&page, from, to, p.steps(), intercepting).await;
    if intercepting {
        intercept(&page, false).await;
    }
    if dragged.is_err() {
        // The page must not be left with a button held down.
        let _ = page
            .mouse(
                DispatchMouseEventType::MouseReleased,
                to,
                Some(MouseButton::Left),
                0,
            )
            .await;
    }
    Ok(Output {
        dragged: true,
        from: Point {
            x: ox + from.0,
            y: oy + from.1,
        },
        to: Point {
            x: ox + to.0,
            y: oy + to.1,
        },
        drop_target: dragged?,
    })
}

/// Moves the pointer onto the drag's start, where a press lands (docs/protocol.md §16): an
/// element's point, checked again once the pointer rests there.
async fn pointer_on(page: &Page<'_>, start: Spot<'_>) -> Result<(f64, f64), ActionError> {
    let aimed = match start {
        Spot::At(at) => {
            let point = page.call(&ClickPoint { at }).await?;
            (point.x, point.y)
        }
        Spot::Point(x, y) | Spot::By(x, y) => page.inside_viewport(x, y).await?,
    };
    page.mouse(DispatchMouseEventType::MouseMoved, aimed, None, 0)
        .await?;
    let Spot::At(at) = start else {
        return Ok(aimed);
    };
    let point = page
        .call(&Landing {
            at,
            x: aimed.0,
            y: aimed.1,
            arm: false,
            settle: false,
        })
        .await?;
    Ok((point.x, point.y))
}

/// Moves from the press to `to` in `steps`, and releases (or drops) there; answers what was
/// under the pointer just before. A drag the page started is noticed from the browser's
/// handing it over while moving (without waiting: the page sees moves with its next frame),
/// and asked of the page once, after a frame, before the release.
async fn moves(
    page: &Page<'_>,
    from: (f64, f64),
    to: (f64, f64),
    steps: u32,
    intercepting: bool,
) -> Result<Option<ElementSeen>, ActionError> {
    let mut events = page.events();
    let mut dragging: Option<DragData> = None;
    for step in 1..=steps {
        let t = f64::from(step) / f64::from(steps);
        let at = (from.0 + (to.0 - from.0) * t, from.1 + (to.1 - from.1) * t);
        match &dragging {
            Some(data) => drag_event(page, DispatchDragEventType::DragOver, at, data).await?,
            None => match intercepting.then(|| handed_over_now(&mut events)).flatten() {
                Some(data) => {
                    drag_event(page, DispatchDragEventType::DragEnter, at, &data).await?;
                    dragging = Some(data);
                }
                None => {
                    page.mouse(DispatchMouseEventType::MouseMoved, at, Some(MouseButton::Left), 1)
                        .await?
                }
            },
        }
    }
    if dragging.is_none() && intercepting && page.call(&DragStarted {}).await?.started {
        let data = handed_over(&mut events).await?;
        drag_event(page, DispatchDragEventType::DragEnter, to, &data).await?;
        dragging = Some(data);
    }
    let under = page.call(&HitAt { x: to.0, y: to.1 }).await?.element;
    match &dragging {
        Some(data) => drag_event(page, DispatchDragEventType::Drop, to, data).await?,
        None => {
            page.mouse(
                DispatchMouseEventType::MouseReleased,
                to,
                Some(MouseButton::Left),
                0,
            )
            .await?
        }
    }
    Ok(under)
}

/// The data of a drag the browser has handed over already, if it has.
fn handed_over_now(events: &mut TabEvents) -> Option<DragData> {
    while let Some((method, params)) = events.ready() {
        if method == EventDragIntercepted::IDENTIFIER {
            return drag_data(params).ok();
        }
    }
    None
}

/// The drag's data from the browser's `dragIntercepted` event.
fn drag_data(params: Value) -> Result<DragData, ActionError> {
    serde_json::from_value::<EventDragIntercepted>(params)
        .map(|event| event.data)
        .map_err(|e| ActionError::internal(format!("the browser's drag data is unreadable: {e}")))
}

/// Turns the browser's handing over of HTML5 drags on or off; false if it will not.
async fn intercept(page: &Page<'_>, enabled: bool) -> bool {
    match page.command(SetInterceptDragsParams::new(enabled)).await {
        Ok(_) => true,
        Err(e) => {
            tracing::debug!(tab = page.tab, "the browser does not hand over drags: {e}");
            false
        }
    }
}

/// The data of the drag the page started, as the browser hands it over.
async fn handed_over(events: &mut TabEvents) -> Result<DragData, ActionError> {
    let deadline = Instant::now() + INTERCEPT_WAIT;
    while let Some((method, params)) = events.next_until(deadline).await? {
        if method == EventDragIntercepted::IDENTIFIER {
            return drag_data(params);
        }
    }
    Err(ActionError::new(
        ErrorCode::CdpError,
        "the page started an HTML5 drag, but the browser did not hand it over within 2 s",
    ))
}

async fn drag_event(
    page: &Page<'_>,
    kind: DispatchDragEventType,
    (x, y): (f64, f64),
    data: &DragData,
) -> Result<(), ActionError> {
    let event = DispatchDragEventParams::new(kind, x, y, data.clone());
    page.command(event).await.map(drop)
}
