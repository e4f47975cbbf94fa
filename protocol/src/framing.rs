//! Native-messaging frames (docs/protocol.md §1): a 32-bit length in native byte order, then that
//! many bytes of UTF-8 JSON.
//!
//! The length is checked against the direction's cap *before* anything is allocated, so a
//! hostile 4 GiB prefix costs four bytes of reading, not four gigabytes of memory.

use byteorder::{ByteOrder, NativeEndian};
use serde::{de::DeserializeOwned, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Chrome kills the port on a host -> browser message larger than this.
pub const HOST_TO_BROWSER_MAX: usize = 1024 * 1024;
/// Chrome's cap on browser -> host messages.
pub const BROWSER_TO_HOST_MAX: usize = 64 * 1024 * 1024;

const HEADER_LEN: usize = 4;

/// Every way a frame can be wrong. None of them is a panic.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("frame length {len} is over the {cap}-byte cap")]
    TooLarge { len: u64, cap: usize },
    #[error("stream ended inside a frame: expected {expected} bytes, got {got}")]
    Truncated { expected: usize, got: usize },
    #[error("frame body is not valid UTF-8 (at byte {})", .0.valid_up_to())]
    InvalidUtf8(std::str::Utf8Error),
    #[error("frame body is not the expected JSON: {0}")]
    InvalidJson(serde_json::Error),
    #[error("i/o error on the native-messaging pipe: {0}")]
    Io(#[from] std::io::Error),
}

/// Encodes one message, refusing it if its body would exceed `cap`.
pub fn encode<T: Serialize>(message: &T, cap: usize) -> Result<Vec<u8>, FrameError> {
    let body = serde_json::to_vec(message).map_err(FrameError::InvalidJson)?;
    if body.len() > cap {
        return Err(FrameError::TooLarge {
            len: body.len() as u64,
            cap,
        });
    }
    let mut frame = vec![0; HEADER_LEN];
    NativeEndian::write_u32(&mut frame, body.len() as u32);
    frame.extend_from_slice(&body);
    Ok(frame)
}

/// Decodes the first frame of `buf`. `Ok(None)` means the buffer holds only part of a frame;
/// otherwise returns the message and how many bytes it used.
pub fn decode<T: DeserializeOwned>(buf: &[u8], cap: usize) -> Result<Option<(T, usize)>, FrameError> {
    let Some(header) = buf.get(..HEADER_LEN) else {
        return Ok(None);
    };
    let len = checked_len(header, cap)?;
    let Some(body) = buf.get(HEADER_LEN..HEADER_LEN + len) else {
        return Ok(None);
    };
    Ok(Some((parse_body(body)?, HEADER_LEN + len)))
}

/// Reads one frame. `Ok(None)` is a clean end of stream between frames (the peer closed).
pub async fn read_frame<R, T>(reader: &mut R, cap: usize) -> Result<Option<T>, FrameError>
where
    R: AsyncRead + Unpin,
    T: DeserializeOwned,
{
    let mut header = [0u8; HEADER_LEN];
    let got = read_full(reader, &mut header).await?;
    if got == 0 {
        return Ok(None);
    }
    if got < HEADER_LEN {
        return Err(FrameError::Truncated {
            expected: HEADER_LEN,
            got,
        });
    }
    let len = checked_len(&header, cap)?;
    // Grow as bytes arrive rather than trusting the prefix with one big allocation.
    let mut body = Vec::with_capacity(len.min(64 * 1024));
    reader.take(len as u64).read_to_end(&mut body).await?;
    if body.len() < len {
        return Err(FrameError::Truncated {
            expected: len,
            got: body.len(),
        });
    }
    parse_body(&body).map(Some)
}

/// Writes one frame and flushes it, refusing it if its body would exceed `cap`.
pub async fn write_frame<W, T>(writer: &mut W, message: &T, cap: usize) -> Result<(), FrameError>
where
    W: AsyncWrite + Unpin,
    T: Serialize,
{
    let frame = encode(message, cap)?;
    writer.write_all(&frame).await?;
    writer.flush().await?;
    Ok(())
}

fn checked_len(header: &[u8], cap: usize) -> Result<usize, FrameError> {
    let len = NativeEndian::read_u32(header);
    if len as u64 > cap as u64 {
        return Err(FrameError::TooLarge { len: len as u64, cap });
    }
    Ok(len as usize)
}

fn parse_body<T: DeserializeOwned>(body: &[u8]) -> Result<T, FrameError> {
    let text = std::str::from_utf8(body).map_err(FrameError::InvalidUtf8)?;
    serde_json::from_str(text).map_err(FrameError::InvalidJson)
}

/// Like `read_exact`, but reports how much it got before the stream ended.
async fn read_full<R: AsyncRead + Unpin>(reader: &mut R, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match reader.read(&mut buf[got..]).await? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut out = (body.len() as u32).to_ne_bytes().to_vec();
        out.extend_from_slice(body);
        out
    }

    #[tokio::test]
    async fn round_trips_messages_back_to_back() {
        let mut wire = Vec::new();
        write_frame(&mut wire, &json!({"a": 1}), HOST_TO_BROWSER_MAX)
            .await
            .unwrap();
        write_frame(&mut wire, &json!("ü"), HOST_TO_BROWSER_MAX)
            .await
            .unwrap();
        let mut reader = wire.as_slice();
        let first: Option<Value> = read_frame(&mut reader, BROWSER_TO_HOST_MAX).await.unwrap();
        let second: Option<Value> = read_frame(&mut reader, BROWSER_TO_HOST_MAX).await.unwrap();
        let end: Option<Value> = read_frame(&mut reader, BROWSER_TO_HOST_MAX).await.unwrap();
        assert_eq!(first, Some(json!({"a": 1})));
        assert_eq!(second, Some(json!("ü")));
        assert_eq!(end, None);
    }

    #[tokio::test]
    async fn a_huge_length_prefix_is_refused_without_reading_on() {
        let mut wire = u32::MAX.to_ne_bytes().to_vec();
        wire.extend_from_slice(b"{}");
        let err = read_frame::<_, Value>(&mut wire.as_slice(), BROWSER_TO_HOST_MAX)
            .await
            .unwrap_err();
        assert!(matches!(err, FrameError::TooLarge { len, .. } if len == u32::MAX as u64));
    }

    #[tokio::test]
    async fn truncation_is_reported_with_what_arrived() {
        let mut wire = frame(b"{\"abc\": 1}");
        wire.truncate(8);
        let err = read_frame::<_, Value>(&mut wire.as_slice(), BROWSER_TO_HOST_MAX)
            .await
            .unwrap_err();
        assert!(
            matches!(err, FrameError::Truncated { expected: 10, got: 4 }),
            "{err}"
        );
        let err = read_frame::<_, Value>(&mut &[1u8, 0][..], BROWSER_TO_HOST_MAX)
            .await
            .unwrap_err();
        assert!(
            matches!(err, FrameError::Truncated { expected: 4, got: 2 }),
            "{err}"
        );
    }

    #[tokio::test]
    async fn bad_utf8_and_bad_json_are_distinct_errors() {
        let err = read_frame::<_, Value>(&mut frame(b"\"\xff\"").as_slice(), 100)
            .await
            .unwrap_err();
        assert!(matches!(err, FrameError::InvalidUtf8(_)), "{err}");
        let err = read_frame::<_, Value>(&mut frame(b"{nope").as_slice(), 100)
            .await
            .unwrap_err();
        assert!(matches!(err, FrameError::InvalidJson(_)), "{err}");
    }

    #[test]
    fn the_host_to_browser_cap_is_exactly_one_mebibyte_of_body() {
        // A JSON string of n chars serialises to n + 2 bytes.
        let fits = "x".repeat(HOST_TO_BROWSER_MAX - 2);
        assert_eq!(
            encode(&fits, HOST_TO_BROWSER_MAX).unwrap().len(),
            HOST_TO_BROWSER_MAX + 4
        );
        let over = "x".repeat(HOST_TO_BROWSER_MAX - 1);
        assert!(matches!(
            encode(&over, HOST_TO_BROWSER_MAX),
            Err(FrameError::TooLarge { .. })
        ));
    }

    #[test]
    fn decode_waits_for_a_whole_frame() {
        let wire = frame(b"[1,2]");
        for cut in 0..wire.len() {
            assert!(decode::<Value>(&wire[..cut], 100).unwrap().is_none());
        }
        let (value, used) = decode::<Value>(&wire, 100).unwrap().unwrap();
        assert_eq!((value, used), (json!([1, 2]), wire.len()));
    }
}
