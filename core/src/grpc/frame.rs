//! gRPC message framing ("Length-Prefixed-Message" of gRPC over HTTP/2): a compressed flag
//! byte, the message length as a big-endian u32, then the protobuf bytes. This server and
//! client send uncompressed messages only and refuse compressed ones (they announce no
//! `grpc-accept-encoding`, so a conforming peer never compresses).

use bytes::{Buf, BufMut, Bytes, BytesMut};

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
        }
    }
}

/// Reads framed messages from chunks as they arrive.
#[derive(Debug)]
pub struct Decoder {
    buf: BytesMut,
    limit: usize,
}

impl Decoder {
    /// A decoder refusing messages over `limit` bytes (before buffering them).
    pub fn new(limit: usize) -> Self {
        Self { buf: BytesMut::new(), limit }
    }

    pub fn push(&mut self, chunk: &[u8]) {
        self.buf.extend_from_slice(chunk);
    }

    /// The next whole message, `None` until one is complete.
    pub fn next_message(&mut self) -> Result<Option<Bytes>, FrameError> {
        if self.buf.len() < PREFIX {
            return Ok(None);
        }
        match self.buf[0] {
            0 => {}
            1 => return Err(FrameError::Compressed),
            flag => return Err(FrameError::BadFlag(flag)),
        }
        let len = u32::from_be_bytes([self.buf[1], self.buf[2], self.buf[3], self.buf[4]]) as usize;
        if len > self.limit {
            return Err(FrameError::TooLarge { len, limit: self.limit });
        }
        if self.buf.len() < PREFIX + len {
            return Ok(None);
        }
        self.buf.advance(PREFIX);
        Ok(Some(self.buf.split_to(len).freeze()))
    }

    /// Whether bytes of an unfinished message are left (at the end of the body: truncated).
    pub fn has_partial(&self) -> bool {
        !self.buf.is_empty()
    }
}

/// The one message of a unary request body: exactly one, whole, within `limit`.
pub fn single_message(body: &[u8], limit: usize) -> Result<Bytes, FrameError> {
    let mut decoder = Decoder::new(limit);
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
        assert_eq!(single_message(&[1, 0, 0, 0, 0], 10), Err(FrameError::Compressed));
        assert_eq!(single_message(&[0, 0, 0, 1, 0], 10), Err(FrameError::TooLarge { len: 256, limit: 10 }));
        assert_eq!(single_message(&[0, 0, 0, 0, 2, 1], 10), Err(FrameError::Truncated));
        assert_eq!(single_message(&[0, 0], 10), Err(FrameError::Truncated));
        assert_eq!(single_message(&[], 10), Err(FrameError::Missing));
        let mut two = encode(b"x").to_vec();
        two.extend_from_slice(&encode(b"y"));
        assert_eq!(single_message(&two, 10), Err(FrameError::Extra));
        assert_eq!(single_message(&[0, 0, 0, 0, 0, 7], 10), Err(FrameError::Extra));
        assert_eq!(single_message(&encode(b"xy"), 10).unwrap(), Bytes::from_static(b"xy"));
    }
}
