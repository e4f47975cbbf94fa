//! `browser_screenshot`: the viewport, the full page (content only, no scrollbars) or one
//! element's box (the part the viewport shows), PNG or JPEG, stored as an artifact. Chromium
//! encodes and scales (`clip.scale`) so no pixels are decoded here; `image` steps in only to
//! read the size and, should rounding overshoot `maxWidth`, to shrink.

use std::io::Cursor;

use base64::Engine as _;
use chromiumoxide::cdp::browser_protocol::emulation::{
    ClearDeviceMetricsOverrideParams, SetDeviceMetricsOverrideParams,
};
use chromiumoxide::cdp::browser_protocol::page::{
    CaptureScreenshotFormat, CaptureScreenshotParams, GetLayoutMetricsParams, Viewport,
};
use image::{ImageFormat as Codec, ImageReader};
use serde_json::Value;
use tether_protocol::actions::browser_screenshot::{Output, Params, DEFAULT_JPEG_QUALITY};
use tether_protocol::actions::ImageFormat;
use tether_protocol::ActionError;

use super::{element, Context};
use crate::page::library::{BoxOf, ElementBox};
use crate::page::Page;

/// What to capture, in CSS pixels, and how many device pixels make one.
struct Region {
    x: f64,
    y: f64,
    width: f64,
    height: f64,
    dpr: f64,
}

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    let page = &cx.page(p.tab_id);
    let params = CaptureScreenshotParams {
        format: Some(match p.format {
            ImageFormat::Png => CaptureScreenshotFormat::Png,
            ImageFormat::Jpeg => CaptureScreenshotFormat::Jpeg,
        }),
        quality: (p.format == ImageFormat::Jpeg).then(|| p.quality.unwrap_or(DEFAULT_JPEG_QUALITY).into()),
        ..CaptureScreenshotParams::default()
    };
    let plain = p.xpath.is_none() && p.r#ref.is_none() && !p.full_page && p.max_width.is_none();
    let mut bytes = match plain && !page.state().clips_viewport() {
        true => viewport(page, params).await?,
        false => clipped(page, &p, params).await?,
    };

    let (mut w, mut h) = dimensions(&bytes)?;
    if let Some(max) = p.max_width.filter(|max| w > *max) {
        (bytes, w, h) = tokio::task::spawn_blocking(move || shrink(&bytes, max, p.format, p.quality))
            .await
            .map_err(|e| ActionError::internal(format!("resizing failed: {e}")))??;
    }
    let size = bytes.len() as u64;
    let stored = page.store(bytes, p.format.content_type()).await?;
    Ok(Output {
        artifact_id: stored.artifact_id,
        url: stored.url,
        width: w,
        height: h,
        format: p.format,
        bytes: size,
    })
}

/// The viewport as the browser shows it, when that is the page's content alone. The layout
/// metrics that tell are asked beside the capture, not before it: a `Page.getLayoutMetrics`
/// first cost 0.6-1.7 ms before every shot (timed in the host under the against_playwright
/// bench).
async fn viewport(page: &Page<'_>, params: CaptureScreenshotParams) -> Result<Vec<u8>, ActionError> {
    let (shot, region) = tokio::join!(capture(page, params.clone()), measure(page, false));
    let (shot, region) = (shot?, region?);
    let (w, h) = dimensions(&shot)?;
    let shows = |css: f64| (css * region.dpr).round() as u32;
    if (w, h) == (shows(region.width), shows(region.height)) {
        return Ok(shot);
    }
    // A scrollbar strip, or a pinch zoom: clip to the content, now and for this tab's next shots.
    page.state().clip_viewport_from_now_on();
    capture(page, with_clip(params, &region, 1.0)).await
}

/// A clipped capture: of an element, the full page, a scaled shot, or a viewport that shows
/// more than the page's content.
async fn clipped(
    page: &Page<'_>,
    p: &Params,
    params: CaptureScreenshotParams,
) -> Result<Vec<u8>, ActionError> {
    let box_of = match element(&p.xpath, &p.r#ref)? {
        Some(at) => Some(page.call(&BoxOf { at }).await?),
        None => None,
    };
    let mut region = measure(page, p.full_page).await?;
    if let Some(element) = box_of {
        region = region.within(element);
    }
    let scale = match p.max_width {
        // Aimed a hair under the target: Chromium rounds the scaled size up, and a pixel over
        // would cost a decode, resize and re-encode here.
        Some(max) if region.width * region.dpr > max as f64 => {
            (max as f64 - 0.01) / (region.width * region.dpr)
        }
        _ => 1.0,
    };
    let params = with_clip(params, &region, scale);
    if p.full_page {
        capture_full_page(page, &region, params).await
    } else {
        capture(page, params).await
    }
}

/// The capture's params clipped to `region`: the page's content alone, never a scrollbar strip.
fn with_clip(mut params: CaptureScreenshotParams, region: &Region, scale: f64) -> CaptureScreenshotParams {
    params.clip = Some(Viewport {
        x: region.x,
        y: region.y,
        width: region.width.max(1.0),
        height: region.height.max(1.0),
        scale,
    });
    params
}

impl Region {
    /// The part of an element's box this region (the viewport) shows.
    fn within(self, element: ElementBox) -> Region {
        let left = element.x.max(self.x);
        let top = element.y.max(self.y);
        let right = (element.x + element.width).min(self.x + self.width);
        let bottom = (element.y + element.height).min(self.y + self.height);
        Region {
            x: left,
            y: top,
            width: (right - left).max(1.0),
            height: (bottom - top).max(1.0),
            dpr: self.dpr,
        }
    }
}

async fn measure(page: &Page<'_>, full_page: bool) -> Result<Region, ActionError> {
    // Read as JSON: `visualViewport.clientWidth` is in device pixels, a field the crate leaves
    // out as deprecated (the CSS one alone does not give the pixel ratio).
    let metrics = page.command_json(GetLayoutMetricsParams {}).await?;
    let number = |pointer: &str| metrics.pointer(pointer).and_then(Value::as_f64).unwrap_or(0.0);
    // The visual viewport's width in CSS pixels excludes the scrollbar: the content's width.
    let content_width = number("/cssVisualViewport/clientWidth");
    let dpr = match content_width {
        w if w > 0.0 => (number("/visualViewport/clientWidth") / w).max(0.1),
        _ => 1.0,
    };
    Ok(if full_page {
        Region {
            x: 0.0,
            y: 0.0,
            width: number("/cssContentSize/width").max(content_width),
            height: number("/cssContentSize/height"),
            dpr,
        }
    } else {
        Region {
            x: number("/cssVisualViewport/pageX"),
            y: number("/cssVisualViewport/pageY"),
            width: content_width,
            height: number("/cssVisualViewport/clientHeight"),
            dpr,
        }
    })
}

/// Captures the whole page by making the viewport as tall as the content for the shot.
/// (`captureBeyondViewport` would be one call, but it leaves the page without its scrollbar
/// afterwards: a visible change to the user's page. The override is undone whatever happens.)
async fn capture_full_page(
    page: &Page<'_>,
    region: &Region,
    params: CaptureScreenshotParams,
) -> Result<Vec<u8>, ActionError> {
    // A viewport browser_resize set keeps its scale and mobile layout, and comes back after.
    let resized = page.state().device_metrics();
    let tall = SetDeviceMetricsOverrideParams::new(
        region.width.round() as i64,
        region.height.round().max(1.0) as i64,
        resized.as_ref().map_or(0.0, |m| m.device_scale_factor),
        resized.as_ref().is_some_and(|m| m.mobile),
    );
    page.command(tall).await?;
    let shot = capture(page, params).await;
    let cleared = match resized {
        Some(metrics) => page.command(metrics).await.map(drop),
        None => page.command(ClearDeviceMetricsOverrideParams {}).await.map(drop),
    };
    let bytes = shot?;
    cleared?;
    Ok(bytes)
}

async fn capture(page: &Page<'_>, params: CaptureScreenshotParams) -> Result<Vec<u8>, ActionError> {
    let shot = page.command(params).await?;
    let data: &str = shot.data.as_ref();
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| ActionError::internal(format!("screenshot data is not base64: {e}")))
}

/// Reads the pixel size from the image header, without decoding.
fn dimensions(bytes: &[u8]) -> Result<(u32, u32), ActionError> {
    ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| ActionError::internal(format!("unreadable screenshot: {e}")))?
        .into_dimensions()
        .map_err(|e| ActionError::internal(format!("unreadable screenshot: {e}")))
}

fn shrink(
    bytes: &[u8],
    max_width: u32,
    format: ImageFormat,
    quality: Option<u8>,
) -> Result<(Vec<u8>, u32, u32), ActionError> {
    let decoded = image::load_from_memory(bytes)
        .map_err(|e| ActionError::internal(format!("cannot decode screenshot: {e}")))?;
    let height = ((decoded.height() as u64 * max_width as u64) / decoded.width().max(1) as u64).max(1) as u32;
    let resized = decoded.resize_exact(max_width, height, image::imageops::FilterType::Triangle);
    let mut out = Cursor::new(Vec::new());
    let encoded = match format {
        ImageFormat::Png => resized.write_to(&mut out, Codec::Png),
        ImageFormat::Jpeg => {
            let quality = quality.unwrap_or(DEFAULT_JPEG_QUALITY);
            let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality);
            resized.to_rgb8().write_with_encoder(encoder)
        }
    };
    encoded.map_err(|e| ActionError::internal(format!("cannot encode screenshot: {e}")))?;
    Ok((out.into_inner(), max_width, height))
}
