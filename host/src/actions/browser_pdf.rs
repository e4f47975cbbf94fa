//! `browser_pdf`: the page printed through CDP's `Page.printToPDF`, stored as an
//! `application/pdf` artifact.

use base64::Engine;
use chromiumoxide::cdp::browser_protocol::page::PrintToPdfParams;
use tether_protocol::actions::browser_pdf::{Output, Params};
use tether_protocol::{ActionError, ErrorCode};

use super::Context;

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    let page = cx.page(p.tab_id);
    let (width, height) = p.paper.inches();
    let print = PrintToPdfParams {
        landscape: Some(p.landscape),
        print_background: Some(p.print_background.unwrap_or(true)),
        paper_width: Some(width),
        paper_height: Some(height),
        ..PrintToPdfParams::default()
    };
    let printed = page.command(print).await.map_err(|e| match e.code {
        ErrorCode::CdpError => ActionError::new(
            ErrorCode::Unsupported,
            format!("this browser will not print the page for Tether ({}); a worker's own Chromium can: tether-host worker", e.message),
        ),
        _ => e,
    })?;
    let data: &str = printed.data.as_ref();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .map_err(|e| ActionError::internal(format!("the PDF is not base64: {e}")))?;
    let pages = pages(&bytes);
    let size = bytes.len() as u64;
    let stored = page.store(bytes, "application/pdf").await?;
    Ok(Output {
        artifact_id: stored.artifact_id,
        url: stored.url,
        pages,
        bytes: size,
    })
}

/// How many pages a PDF from Chromium has: its page objects (`/Type /Page`, not the `/Pages`
/// tree above them). Chromium's PDFs write their objects uncompressed, so they can be counted.
fn pages(pdf: &[u8]) -> u32 {
    let mut count = 0;
    for (at, _) in pdf.windows(10).enumerate().filter(|(_, w)| *w == b"/Type /Pag") {
        if pdf.get(at + 10) == Some(&b'e') && pdf.get(at + 11) != Some(&b's') {
            count += 1;
        }
    }
    count
}

#[cfg(test)]
mod tests {
    #[test]
    fn pages_are_counted_without_the_page_tree() {
        let pdf = b"1 0 obj << /Type /Pages /Count 2 >> 2 0 obj << /Type /Page >> 3 0 obj << /Type /Page/Parent 1 0 R >>";
        assert_eq!(super::pages(pdf), 2);
    }
}
