//! gRPC message framing ("Length-Prefixed-Message" of gRPC over HTTP/2): a compressed flag
//! byte, the message length as a big-endian u32, then the protobuf bytes. This server and
//! client send uncompressed messages, and read gzip ones (`grpc-encoding: gzip`, announced in
//! `grpc-accept-encoding`): Java clients compress when told to, and grpcio servers (a2a-sdk's)
//! compress their answers whatever the client asked. Any other encoding is refused.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use std::io::Read;

/// What `grpc-accept-encoding` says this side reads.
pub const ACCEPT_ENCODING: &str = "gzip, identity";

/// The message encoding a peer named in `grpc-encoding`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// None named, or `identity`: a compressed message is a broken peer.
    Identity,
    Gzip,
    /// One this side does not read.
    Unknown,
}

impl Encoding {
    pub fn of(headers: &http::HeaderMap) -> Self {
        match headers.get("grpc-encoding").map(|v| v.as_bytes().trim_ascii()) {
            None => Encoding::Identity,
            Some(v) if v.is_empty() || v.eq_ignore_ascii_case(b"identity") => Encoding::Identity,
            Some(v) if v.eq_ignore_ascii_case(b"gzip") => Encoding::Gzip,
            Some(_) => Encoding::Unknown,
        }
    }
}

/// The length prefix of every message.
pub const PREFIX: usize = 5;

/// One message framed.
pub fn encode(message: &[u8]) -> Bytes {
    let mut buf = BytesMut::with_capacity(PREFIX + message.len());
    buf.put_u8(0);
    buf.put_u32(u32::try_from(message.len()).unwrap_or(u32::MAX));
    buf.put_slice(message);
    buf.freeze()
}

/// `message` encoded and framed in one buffer.
pub fn encode_message<M: prost::Message>(message: &M) -> Bytes {
    let len = message.encoded_len();
    let mut buf = BytesMut::with_capacity(PREFIX + len);
    buf.put_u8(0);
    buf.put_u32(u32::try_from(len).unwrap_or(u32::MAX));
    // Cannot fail: the buffer has room for `encoded_len` bytes.
    let _ = message.encode(&mut buf);
    buf.freeze()
}

/// Why bytes are not a well-framed message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameError {
    /// The compressed flag is set.
    Compressed,
    /// The flag byte is neither 0 nor 1.
    BadFlag(u8),
    /// A message longer than the limit.
    TooLarge { len: usize, limit: usize },
    /// The bytes end inside a message.
    Truncated,
    /// A unary call's body holds no message.
    Missing,
    /// A unary call's body holds more than its one message.
    Extra,
    /// A compressed message that does not inflate.
    Corrupt(String),
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrameError::Compressed => f.write_str("compressed gRPC messages are not supported"),
            FrameError::BadFlag(flag) => write!(f, "a gRPC message's flag byte is 0 or 1, not {flag}"),
            FrameError::TooLarge { len, limit } => {
                write!(f, "a gRPC message of {len} bytes is over the {limit}-byte limit")
            }
            FrameError::Truncated => f.write_str("the gRPC message is cut short"),
            FrameError::Missing => f.write_str("a unary gRPC call needs one request message; the body has none"),
            FrameError::Extra => f.write_str("a unary gRPC call takes one request message; the body has more"),
            FrameError::Corrupt(why) => write!(f, "a gzip gRPC message does not inflate: {why}"),
        }
    }
}

/// Reads framed messages from chunks as they arrive.
#[derive(Debug)]
pub struct Decoder {
    buf: BytesMut,
    limit: usize,
    encoding: Encoding,
}

impl Decoder {
    /// A decoder refusing messages over `limit` bytes (before buffering them, and once
    /// decompressed), reading compressed ones only with gzip named.
    pub fn new(limit: usize) -> Self {
        Self { buf: BytesMut::new(), limit, encoding: Encoding::Identity }
    }

    /// Reads messages compressed with `encoding` (the peer's `grpc-encoding`).
    pub fn with_encoding(mut self, encoding: Encoding) -> Self {
        self.encoding = encoding;
        self
    }

    pub fn push(&mut self, chunk: &[u8]) {
        self.buf.extend_from_slice(chunk);
    }

    /// The next whole message, `None` until one is complete.
    pub fn next_message(&mut self) -> Result<Option<Bytes>, FrameError> {
        if self.buf.len() < PREFIX {
            return Ok(None);
        }
        let compressed = match self.buf[0] {
            0 => false,
            1 if self.encoding == Encoding::Gzip => true,
            1 => return Err(FrameError::Compressed),
            flag => return Err(FrameError::BadFlag(flag)),
        };
        let len = u32::from_be_bytes([self.buf[1], self.buf[2], self.buf[3], self.buf[4]]) as usize;
        if len > self.limit {
            return Err(FrameError::TooLarge { len, limit: self.limit });
        }
        if self.buf.len() < PREFIX + len {
            return Ok(None);
        }
        self.buf.advance(PREFIX);
        let message = self.buf.split_to(len).freeze();
        if compressed { gunzip(&message, self.limit).map(Some) } else { Ok(Some(message)) }
    }

    /// Whether bytes of an unfinished message are left (at the end of the body: truncated).
    pub fn has_partial(&self) -> bool {
        !self.buf.is_empty()
    }
}

/// A gzip message inflated, refused past `limit` bytes without inflating more (a small
/// message may inflate a thousandfold).
fn gunzip(message: &[u8], limit: usize) -> Result<Bytes, FrameError> {
    let mut out = Vec::new();
    let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    flate2::read::GzDecoder::new(message)
        .take(cap)
        .read_to_end(&mut out)
        .map_err(|e| FrameError::Corrupt(e.to_string()))?;
    if out.len() > limit {
        return Err(FrameError::TooLarge { len: out.len(), limit });
    }
    Ok(out.into())
}

/// The one message of a unary request body: exactly one, whole, within `limit`, compressed
/// with `encoding` or not at all.
pub fn single_message(body: &[u8], limit: usize, encoding: Encoding) -> Result<Bytes, FrameError> {
    let mut decoder = Decoder::new(limit).with_encoding(encoding);
    decoder.push(body);
    match decoder.next_message()? {
        Some(message) if !decoder.has_partial() => Ok(message),
        // A second message in a unary call, or bytes after the first.
        Some(_) => Err(FrameError::Extra),
        None if body.is_empty() => Err(FrameError::Missing),
        None => Err(FrameError::Truncated),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_in_any_chunking() {
        let mut wire = Vec::new();
        for m in [&b""[..], b"a", &[7u8; 300]] {
            wire.extend_from_slice(&encode(m));
        }
        for step in [1, 2, 5, 7, wire.len()] {
            let mut d = Decoder::new(1024);
            let mut got = Vec::new();
            for chunk in wire.chunks(step) {
                d.push(chunk);
                while let Some(m) = d.next_message().unwrap() {
                    got.push(m);
                }
            }
            assert_eq!(got.len(), 3, "step {step}");
            assert_eq!(got[2].len(), 300);
            assert!(!d.has_partial());
        }
    }

    #[test]
    fn refusals() {
        assert_eq!(single_message(&[1, 0, 0, 0, 0], 10, Encoding::Identity), Err(FrameError::Compressed));
        assert_eq!(
            single_message(&[0, 0, 0, 1, 0], 10, Encoding::Identity),
            Err(FrameError::TooLarge { len: 256, limit: 10 })
        );
        assert_eq!(single_message(&[0, 0, 0, 0, 2, 1], 10, Encoding::Identity), Err(FrameError::Truncated));
        assert_eq!(single_message(&[0, 0], 10, Encoding::Identity), Err(FrameError::Truncated));
        assert_eq!(single_message(&[], 10, Encoding::Identity), Err(FrameError::Missing));
        let mut two = encode(b"x").to_vec();
        two.extend_from_slice(&encode(b"y"));
        assert_eq!(single_message(&two, 10, Encoding::Identity), Err(FrameError::Extra));
        assert_eq!(single_message(&[0, 0, 0, 0, 0, 7], 10, Encoding::Identity), Err(FrameError::Extra));
        assert_eq!(single_message(&encode(b"xy"), 10, Encoding::Identity).unwrap(), Bytes::from_static(b"xy"));
    }

    /// A gzip message framed with the compressed flag.
    fn gzipped(message: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(message).unwrap();
        let z = z.finish().unwrap();
        let mut framed = vec![1];
        framed.extend_from_slice(&u32::try_from(z.len()).unwrap().to_be_bytes());
        framed.extend_from_slice(&z);
        framed
    }

    #[test]
    fn gzip_messages_are_read_when_named_and_bounded_once_inflated() {
        let message = b"a message that compresses".repeat(4);
        assert_eq!(single_message(&gzipped(&message), 1000, Encoding::Gzip).unwrap(), Bytes::from(message.clone()));
        // Compressed without gzip named: refused as before.
        assert_eq!(single_message(&gzipped(&message), 1000, Encoding::Identity), Err(FrameError::Compressed));
        assert_eq!(single_message(&gzipped(&message), 1000, Encoding::Unknown), Err(FrameError::Compressed));
        // A bomb: 10 MB of zeros in a few KB, refused at the limit.
        let bomb = gzipped(&vec![0u8; 10 << 20]);
        assert!(bomb.len() < 64 << 10);
        assert_eq!(
            single_message(&bomb, 1 << 20, Encoding::Gzip),
            Err(FrameError::TooLarge { len: (1 << 20) + 1, limit: 1 << 20 })
        );
        // Not gzip at all.
        let mut garbage = vec![1, 0, 0, 0, 3];
        garbage.extend_from_slice(b"xyz");
        assert!(matches!(single_message(&garbage, 1000, Encoding::Gzip), Err(FrameError::Corrupt(_))));
        // Mixed in one stream: one plain, one compressed.
        let mut d = Decoder::new(1000).with_encoding(Encoding::Gzip);
        d.push(&encode(b"plain"));
        d.push(&gzipped(b"packed"));
        assert_eq!(d.next_message().unwrap().unwrap(), Bytes::from_static(b"plain"));
        assert_eq!(d.next_message().unwrap().unwrap(), Bytes::from_static(b"packed"));
    }
}
