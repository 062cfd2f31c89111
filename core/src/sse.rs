//! Server-Sent Events: the encoder and the incremental decoder that carry A2A streaming responses
//! (`SendStreamingMessage`, `SubscribeToTask`) over HTTP, for servers and clients alike.
//!
//! The decoder follows the WHATWG HTML rules "Interpreting an event stream", so it accepts what any
//! conforming server sends however the transport chunks it. It is sans-I/O: feed it body chunks as
//! they arrive. Unlike a browser it bounds the size of one event, because the peer decides how long
//! an event is and a client must not buffer without end.
//!
//! Deliberate differences from the browser `EventSource` object:
//! - [`SseEvent::id`] and [`SseEvent::retry`] are the fields of that event only, so that encoding
//!   then decoding gives the event back. The spec's stream-wide state (the last event ID, which
//!   persists across events, and the reconnection time) is in [`SseDecoder::last_event_id`] and
//!   [`SseDecoder::reconnection_time`].
//! - [`SseDecoder::finish`] reports a stream cut in the middle of an event instead of staying
//!   silent; the partial event is still discarded, as the spec says.

use crate::error::{A2AError, ErrorKind};
use std::fmt::Write as _;

pub mod vectors;

/// One event as sent on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The event type; `None` (or empty) means the default type, "message".
    pub event: Option<String>,
    /// The `data` lines joined by "\n". Decoded data has every line break normalised to "\n".
    pub data: String,
    /// The `id` field of this event, if it had one. `Some("")` resets the last event ID.
    pub id: Option<String>,
    /// The `retry` field of this event (reconnection time in milliseconds), if valid.
    pub retry: Option<u64>,
}

impl SseEvent {
    /// An event of the default type carrying `data`.
    pub fn data(data: impl Into<String>) -> Self {
        Self { data: data.into(), ..Self::default() }
    }
}

/// Why the decoder rejected part of an event stream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    /// One event grew beyond the decoder's limit; it is skipped up to the next blank line.
    #[error("server-sent event larger than {limit} bytes")]
    EventTooLarge { limit: usize },
    /// The stream ended after part of an event; that part was discarded.
    #[error("event stream ended in the middle of an event")]
    UnterminatedEvent,
}

impl From<SseError> for A2AError {
    fn from(err: SseError) -> Self {
        // Only a peer's response stream is ever decoded, so a bad stream is a bad agent response.
        A2AError::new(ErrorKind::InvalidAgentResponse, err.to_string())
    }
}

/// `event: …`, `id: …`, `retry: …` and one `data: …` line per line of `event.data`, then the blank
/// line that dispatches it. Every encoded event is dispatched by a decoder, even with empty data.
pub fn encode(event: &SseEvent) -> String {
    let mut out = String::with_capacity(event.data.len() + 64);
    encode_into(event, &mut out);
    out
}

/// [`encode`], appending to `out` (lets a server reuse one buffer).
///
/// Line breaks cannot be carried inside `event` or `id`: they are removed there (and NUL from
/// `id`, which a receiver would otherwise ignore), rather than let a value forge extra fields.
pub fn encode_into(event: &SseEvent, out: &mut String) {
    if let Some(name) = event.event.as_deref()
        && name.chars().any(|c| !is_line_break(c))
    {
        write_field(out, "event", name, is_line_break);
    }
    if let Some(id) = event.id.as_deref() {
        write_field(out, "id", id, |c| is_line_break(c) || c == '\0');
    }
    if let Some(ms) = event.retry {
        let _ = writeln!(out, "retry: {ms}");
    }
    for line in lines(&event.data) {
        // Always a space after the colon: the decoder removes exactly one, so data that starts
        // with a space keeps it.
        out.push_str("data: ");
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
}

/// A comment block (`: text` per line, then a blank line), e.g. a keep-alive that stops proxies
/// from closing an idle stream. Decoders ignore it.
pub fn encode_comment(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 4);
    for line in lines(text) {
        out.push_str(": ");
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
    out
}

fn is_line_break(c: char) -> bool {
    c == '\n' || c == '\r'
}

fn write_field(out: &mut String, name: &str, value: &str, banned: fn(char) -> bool) {
    out.push_str(name);
    out.push_str(": ");
    if value.contains(banned) {
        out.extend(value.chars().filter(|&c| !banned(c)));
    } else {
        out.push_str(value);
    }
    out.push('\n');
}

/// Splits on CRLF, CR and LF, the three line breaks of the SSE grammar. "" is one empty line and
/// a trailing break gives a trailing empty line, so the decoder rebuilds the same text.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let s = rest?;
        match find_line_break(s.as_bytes()) {
            Some(i) => {
                let skip = if s[i..].starts_with("\r\n") { 2 } else { 1 };
                rest = Some(&s[i + skip..]);
                Some(&s[..i])
            }
            None => rest.take(),
        }
    })
}

/// The first CR or LF. Lines are hundreds of bytes in A2A streams, so skip eight bytes at a time
/// while no byte of the word is a break (`iter().position` is not vectorised: it exits early).
fn find_line_break(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    // Non-zero iff some byte of `word` equals `byte` (the classic "has zero byte" test).
    let has = |word: u64, byte: u8| {
        let x = word ^ (ONES * u64::from(byte));
        x.wrapping_sub(ONES) & !x & HIGHS
    };
    let mut start = 0;
    for word in bytes.chunks_exact(8) {
        let word = u64::from_ne_bytes(word.try_into().expect("8 bytes"));
        if has(word, b'\n') | has(word, b'\r') != 0 {
            break;
        }
        start += 8;
    }
    bytes[start..].iter().position(|&b| b == b'\n' || b == b'\r').map(|i| start + i)
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Incremental decoder: push body chunks, get complete events (and size errors) back in order.
///
/// Memory is bounded by `max_event_bytes`: what counts is the bytes of the pending event's lines
/// (line breaks and comment lines excluded, an incomplete line included). Past the limit the
/// decoder reports [`SseError::EventTooLarge`] once and drops input up to the next blank line.
/// It never panics, whatever the bytes.
#[derive(Debug)]
pub struct SseDecoder {
    max_event_bytes: usize,
    /// Start of a line whose end has not arrived yet; never a comment, never beyond the limit.
    line: Vec<u8>,
    /// The last chunk ended in CR: an LF starting the next one completes that same line break.
    after_cr: bool,
    /// Bytes of a leading UTF-8 BOM matched so far; `None` once past the start of the stream.
    bom: Option<usize>,
    /// Drop the rest of the current line (a comment, or part of an oversized event).
    drop_line: bool,
    /// An oversized event was reported: drop lines until the blank line that ends it.
    drop_event: bool,
    /// Bytes of the pending event's complete non-comment lines.
    event_bytes: usize,
    // The pending event's buffers.
    data: String,
    event: String,
    id: Option<String>,
    retry: Option<u64>,
    // Stream-wide state.
    last_event_id: String,
    reconnection_time: Option<u64>,
}

impl SseDecoder {
    pub fn new(max_event_bytes: usize) -> Self {
        Self {
            max_event_bytes,
            line: Vec::new(),
            after_cr: false,
            bom: Some(0),
            drop_line: false,
            drop_event: false,
            event_bytes: 0,
            data: String::new(),
            event: String::new(),
            id: None,
            retry: None,
            last_event_id: String::new(),
            reconnection_time: None,
        }
    }

    /// The spec's last event ID: set by each dispatched (or dataless) event with an `id` field and
    /// kept across events. A client sends it as `Last-Event-ID` when it reconnects.
    pub fn last_event_id(&self) -> &str {
        &self.last_event_id
    }

    /// The spec's reconnection time: the last valid `retry` value seen (in milliseconds), even one
    /// in an event that was not dispatched.
    pub fn reconnection_time(&self) -> Option<u64> {
        self.reconnection_time
    }

    /// Decodes one chunk. Chunks may split anything: lines, CRLF pairs, UTF-8 characters.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<Result<SseEvent, SseError>> {
        let mut out = Vec::new();
        self.push_into(chunk, &mut out);
        out
    }

    /// [`push`](Self::push), appending to `out` so a caller can reuse one vector.
    pub fn push_into(&mut self, chunk: &[u8], out: &mut Vec<Result<SseEvent, SseError>>) {
        let mut rest = chunk;
        if let Some(seen) = self.bom {
            let matched = rest.iter().zip(&BOM[seen..]).take_while(|(a, b)| a == b).count();
            if seen + matched == BOM.len() {
                self.bom = None;
                rest = &rest[matched..];
            } else if matched == rest.len() {
                // Still a BOM prefix; wait for more.
                self.bom = Some(seen + matched);
                return;
            } else {
                // Not a BOM after all: what was held back is ordinary content.
                self.bom = None;
                self.scan(&BOM[..seen], out);
            }
        }
        self.scan(rest, out);
    }

    /// Ends the stream. A partial event is discarded, as the spec says; it is reported as
    /// [`SseError::UnterminatedEvent`] if, since the last blank line, any line other than a comment
    /// began (complete or not) and it was not already reported as too large. A2A servers end their
    /// streams after a complete event, so this means the connection was cut.
    pub fn finish(self) -> Result<(), SseError> {
        let pending = self.event_bytes > 0 || !self.line.is_empty() || self.bom.is_some_and(|n| n > 0);
        if pending && !self.drop_event { Err(SseError::UnterminatedEvent) } else { Ok(()) }
    }

    /// Splits `bytes` into lines, completing the one held from earlier chunks.
    fn scan(&mut self, mut rest: &[u8], out: &mut Vec<Result<SseEvent, SseError>>) {
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if rest[0] == b'\n' {
                rest = &rest[1..];
            }
        }
        while let Some(i) = find_line_break(rest) {
            let mut next = i + 1;
            if rest[i] == b'\r' {
                match rest.get(next) {
                    Some(b'\n') => next += 1,
                    Some(_) => {}
                    // The LF, if any, is in the next chunk; the line ends here regardless.
                    None => self.after_cr = true,
                }
            }
            self.end_line(&rest[..i], out);
            rest = &rest[next..];
        }
        if !rest.is_empty() {
            self.partial_line(rest, out);
        }
    }

    fn partial_line(&mut self, bytes: &[u8], out: &mut Vec<Result<SseEvent, SseError>>) {
        if self.drop_line {
            return;
        }
        // Comments are never kept, so even a huge one costs no memory.
        if self.drop_event || (self.line.is_empty() && bytes[0] == b':') {
            self.drop_line = true;
            return;
        }
        let size = self.event_bytes.saturating_add(self.line.len()).saturating_add(bytes.len());
        if size > self.max_event_bytes {
            self.too_large(out);
            self.drop_line = true;
            return;
        }
        self.line.extend_from_slice(bytes);
    }

    /// A line break arrived; `tail` is the part of the line in the current chunk.
    fn end_line(&mut self, tail: &[u8], out: &mut Vec<Result<SseEvent, SseError>>) {
        if std::mem::take(&mut self.drop_line) {
            return;
        }
        if self.drop_event {
            // Only a blank line matters: it ends the oversized event.
            self.drop_event = !tail.is_empty();
            return;
        }
        if self.line.is_empty() {
            self.process_line(tail, out);
        } else if self.event_bytes.saturating_add(self.line.len()).saturating_add(tail.len()) > self.max_event_bytes {
            // Checked before joining the pieces, so an oversized tail is never copied.
            self.too_large(out);
        } else {
            let mut line = std::mem::take(&mut self.line);
            line.extend_from_slice(tail);
            self.process_line(&line, out);
            line.clear();
            self.line = line; // keep the allocation
        }
    }

    fn process_line(&mut self, line: &[u8], out: &mut Vec<Result<SseEvent, SseError>>) {
        if line.is_empty() {
            return self.dispatch(out);
        }
        if line[0] == b':' {
            return;
        }
        self.event_bytes = self.event_bytes.saturating_add(line.len());
        if self.event_bytes > self.max_event_bytes {
            return self.too_large(out);
        }
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        // Lines split on bytes and each decoded on its own give the same text as decoding the
        // whole stream first: CR, LF and ':' never occur inside a UTF-8 sequence.
        match name {
            b"data" => {
                let value = String::from_utf8_lossy(value);
                self.data.reserve(value.len() + 1);
                self.data.push_str(&value);
                self.data.push('\n');
            }
            b"event" => self.event = String::from_utf8_lossy(value).into_owned(),
            b"id" if !value.contains(&0) => self.id = Some(String::from_utf8_lossy(value).into_owned()),
            b"retry" => {
                if let Some(ms) = parse_retry(value) {
                    self.retry = Some(ms);
                    self.reconnection_time = Some(ms);
                }
            }
            _ => {}
        }
    }

    /// The blank line: hand the pending event out if its data buffer is not empty.
    fn dispatch(&mut self, out: &mut Vec<Result<SseEvent, SseError>>) {
        if let Some(id) = &self.id {
            self.last_event_id.clone_from(id);
        }
        self.event_bytes = 0;
        let id = self.id.take();
        let retry = self.retry.take();
        let event = std::mem::take(&mut self.event);
        if self.data.is_empty() {
            return;
        }
        let mut data = std::mem::take(&mut self.data);
        data.pop(); // every data line appended an LF; the last one is not part of the data
        out.push(Ok(SseEvent { event: (!event.is_empty()).then_some(event), data, id, retry }));
    }

    fn too_large(&mut self, out: &mut Vec<Result<SseEvent, SseError>>) {
        out.push(Err(SseError::EventTooLarge { limit: self.max_event_bytes }));
        self.line.clear();
        self.data.clear();
        self.event.clear();
        self.id = None;
        self.retry = None;
        self.event_bytes = 0;
        self.drop_event = true;
    }
}

/// `retry` counts only if it is all ASCII digits; a value too big for u64 is ignored too.
fn parse_retry(value: &[u8]) -> Option<u64> {
    // `all` is vacuously true for "", which `parse` then refuses.
    if !value.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(value).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const BIG: usize = 1 << 20;

    fn ev(data: &str) -> SseEvent {
        SseEvent::data(data)
    }

    /// Everything decoded from `chunks` with `limit`, the result of `finish` last (if an error).
    fn decode_chunks<'a>(limit: usize, chunks: impl IntoIterator<Item = &'a [u8]>) -> Vec<Result<SseEvent, SseError>> {
        let mut dec = SseDecoder::new(limit);
        let mut out = Vec::new();
        for chunk in chunks {
            dec.push_into(chunk, &mut out);
            assert!(dec.line.len() <= limit, "held line beyond the limit");
        }
        if let Err(e) = dec.finish() {
            out.push(Err(e));
        }
        out
    }

    fn decode(input: &[u8]) -> Vec<Result<SseEvent, SseError>> {
        decode_chunks(BIG, [input])
    }

    fn events(input: &[u8]) -> Vec<SseEvent> {
        decode(input).into_iter().map(|r| r.expect("no error")).collect()
    }

    #[test]
    fn fields_and_multi_line_data() {
        let got = events(b"event: statusUpdate\nid: 42\nretry: 3000\ndata: a\ndata: b\n\ndata: c\n\n");
        let first = SseEvent {
            event: Some("statusUpdate".into()),
            data: "a\nb".into(),
            id: Some("42".into()),
            retry: Some(3000),
        };
        assert_eq!(got, vec![first, ev("c")]);
        // A repeated field: the last one wins.
        let last = SseEvent { event: Some("b".into()), id: Some("2".into()), ..ev("x") };
        assert_eq!(events(b"event: a\nid: 1\nevent: b\nid: 2\ndata: x\n\n"), vec![last]);
    }

    #[test]
    fn every_line_break_kind() {
        assert_eq!(events(b"data: a\r\ndata: b\rdata: c\n\r\n"), vec![ev("a\nb\nc")]);
        // LF then CR is two breaks, so a blank line.
        assert_eq!(events(b"data: a\n\rdata: b\r\r"), vec![ev("a"), ev("b")]);
    }

    #[test]
    fn crlf_split_across_chunks_is_one_break() {
        let got = decode_chunks(BIG, [&b"data: a\r"[..], b"\ndata: b\r", b"\n\r", b"\n"]);
        assert_eq!(got, vec![Ok(ev("a\nb"))]);
        // A CR ending a chunk and followed by something else is still a break.
        let got = decode_chunks(BIG, [&b"data: a\r"[..], b"data: b\r", b"\r"]);
        assert_eq!(got, vec![Ok(ev("a\nb"))]);
        // An empty chunk in between does not forget the CR.
        let got = decode_chunks(BIG, [&b"data: a\r"[..], b"", b"\n\n"]);
        assert_eq!(got, vec![Ok(ev("a"))]);
    }

    #[test]
    fn comments_are_ignored_and_not_counted() {
        assert_eq!(events(b": hi\ndata: a\n: mid\ndata: b\n\n:\n\n"), vec![ev("a\nb")]);
        let long_comment = format!(":{}\ndata: ok\n\n", "x".repeat(100));
        assert_eq!(decode_chunks(10, long_comment.as_bytes().chunks(7)), vec![Ok(ev("ok"))]);
    }

    #[test]
    fn field_without_colon_and_leading_space() {
        assert_eq!(events(b"data\n\ndata\ndata\n\n"), vec![ev(""), ev("\n")]);
        assert_eq!(events(b"data:  two\ndata:none\ndata: a:b\n\n"), vec![ev(" two\nnone\na:b")]);
    }

    #[test]
    fn bom_only_at_stream_start() {
        assert_eq!(events(b"\xEF\xBB\xBFdata: a\n\n"), vec![ev("a")]);
        assert_eq!(decode_chunks(BIG, [&b"\xEF"[..], b"\xBB", b"\xBFdata: a\n\n"]), vec![Ok(ev("a"))]);
        // A second BOM belongs to the field name, so the field is unknown.
        assert_eq!(events(b"\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\ndata: b\n\n"), vec![ev("b")]);
        // A BOM prefix that turns out not to be one is content, even split over chunks.
        assert_eq!(decode_chunks(BIG, [&b"\xEF\xBB"[..], b"data: a\n\ndata: b\n\n"]), vec![Ok(ev("b"))]);
        assert_eq!(events(b"\xEF\xBB\n\ndata: b\n\n"), vec![ev("b")]);
        assert_eq!(events(b"data: \xEF\xBB\xBFx\n\n"), vec![ev("\u{FEFF}x")]);
    }

    #[test]
    fn unknown_fields_and_case() {
        assert_eq!(events(b"foo: bar\nData: x\ndata : y\ndata: ok\n\n"), vec![ev("ok")]);
    }

    #[test]
    fn empty_data_buffer_is_not_dispatched() {
        let mut dec = SseDecoder::new(BIG);
        assert!(dec.push(b"event: ping\n\nid: 7\n\nretry: 10\n\n").is_empty());
        assert_eq!(dec.last_event_id(), "7");
        assert_eq!(dec.reconnection_time(), Some(10));
        // The event type and per-event fields did not leak into the next event.
        assert_eq!(dec.push(b"data: x\n\n"), vec![Ok(ev("x"))]);
        assert_eq!(dec.finish(), Ok(()));
    }

    #[test]
    fn event_type_resets_and_empty_means_default() {
        let typed = SseEvent { event: Some("a".into()), ..ev("1") };
        assert_eq!(events(b"event: a\ndata: 1\n\ndata: 2\n\nevent:\ndata: 3\n\n"), vec![typed, ev("2"), ev("3")]);
    }

    #[test]
    fn ids() {
        let mut dec = SseDecoder::new(BIG);
        let got = dec.push(b"id: 1\ndata: a\n\nid: x\0y\ndata: b\n\n");
        assert_eq!(got, vec![Ok(SseEvent { id: Some("1".into()), ..ev("a") }), Ok(ev("b"))]);
        assert_eq!(dec.last_event_id(), "1", "an id with NUL is ignored");
        let got = dec.push(b"id\ndata: c\n\n");
        assert_eq!(got, vec![Ok(SseEvent { id: Some(String::new()), ..ev("c") })]);
        assert_eq!(dec.last_event_id(), "", "an empty id resets the last event ID");
    }

    #[test]
    fn retry_needs_digits_only() {
        let input = b"retry: 1000\ndata: a\n\nretry: 10x\ndata: b\n\nretry:  5\ndata: c\n\nretry\ndata: d\n\n\
                      retry: 99999999999999999999999\ndata: e\n\n";
        let got = events(input);
        assert_eq!(got[0].retry, Some(1000));
        assert!(got[1..].iter().all(|e| e.retry.is_none()), "{got:?}");
        assert_eq!(got.len(), 5);
    }

    #[test]
    fn invalid_utf8_becomes_replacement_and_split_chars_survive() {
        assert_eq!(
            events(b"data: a\xFFb\xE2\x82\nid: \xC3\n\n"),
            vec![SseEvent { id: Some("\u{FFFD}".into()), ..ev("a\u{FFFD}b\u{FFFD}") }]
        );
        let text = "data: h\u{e9}llo \u{20AC} \u{1F600}\n\n".as_bytes();
        for at in 0..=text.len() {
            let got = decode_chunks(BIG, [&text[..at], &text[at..]]);
            assert_eq!(got, vec![Ok(ev("h\u{e9}llo \u{20AC} \u{1F600}"))], "split at {at}");
        }
    }

    #[test]
    fn size_limit_reports_once_and_resynchronises() {
        let too_large = Err(SseError::EventTooLarge { limit: 16 });
        // Exactly the limit is fine (the line "data: 0123456789" is 16 bytes).
        assert_eq!(decode_chunks(16, [&b"data: 0123456789\n\n"[..]]), vec![Ok(ev("0123456789"))]);
        // The limit counts the whole event, and the rest of the event is skipped: its id too.
        let input = b"data: 0123456789\ndata: 0123456789\nid: 9\ndata: c\n\nid: 1\ndata: ok\n\n";
        for chunks in [input.chunks(input.len()), input.chunks(1), input.chunks(5)] {
            let got = decode_chunks(16, chunks);
            assert_eq!(got, vec![too_large.clone(), Ok(SseEvent { id: Some("1".into()), ..ev("ok") })]);
        }
        // An oversized event cut by the end of the stream was already reported.
        assert_eq!(decode_chunks(16, [&b"data: 0123456789abcdef"[..]]), vec![too_large]);
    }

    #[test]
    fn endless_line_stays_bounded() {
        let mut dec = SseDecoder::new(1024);
        let mut errors = 0;
        dec.push(b"data: ");
        for _ in 0..1000 {
            errors += dec.push(&[b'x'; 4096]).len();
            assert!(dec.line.capacity() <= 4096);
        }
        assert_eq!(errors, 1);
        assert_eq!(dec.push(b"\n\ndata: ok\n\n"), vec![Ok(ev("ok"))]);
        // A held line whose huge rest arrives in one chunk together with its line break.
        dec.push(b"data: ");
        let mut rest = vec![b'x'; 1 << 20];
        rest.extend_from_slice(b"\n\ndata: ok\n\n");
        assert_eq!(dec.push(&rest), vec![Err(SseError::EventTooLarge { limit: 1024 }), Ok(ev("ok"))]);
        assert!(dec.line.capacity() <= 4096);
    }

    #[test]
    fn finish_reports_a_cut_event() {
        assert_eq!(decode(b"data: a\n\ndata: b\n"), vec![Ok(ev("a")), Err(SseError::UnterminatedEvent)]);
        assert_eq!(decode(b"data: a\n\ndata: b"), vec![Ok(ev("a")), Err(SseError::UnterminatedEvent)]);
        assert_eq!(decode(b"data: a\n\n: bye"), vec![Ok(ev("a"))]);
        assert_eq!(decode(b"data: a\r\r"), vec![Ok(ev("a"))]);
        assert_eq!(decode(b"\xEF\xBB"), vec![Err(SseError::UnterminatedEvent)]);
        assert_eq!(decode(b"\xEF\xBB\xBF"), vec![]);
    }

    #[test]
    fn encoding() {
        let full =
            SseEvent { event: Some("status".into()), data: "{}".into(), id: Some("7".into()), retry: Some(3000) };
        assert_eq!(encode(&full), "event: status\nid: 7\nretry: 3000\ndata: {}\n\n");
        assert_eq!(encode(&ev("a\nb\r\nc\rd")), "data: a\ndata: b\ndata: c\ndata: d\n\n");
        assert_eq!(encode(&ev("")), "data: \n\n");
        assert_eq!(encode(&ev(" a\n")), "data:  a\ndata: \n\n");
        let hostile = SseEvent { event: Some("a\r\nb".into()), id: Some("1\n2\u{0}3".into()), ..ev("x") };
        assert_eq!(encode(&hostile), "event: ab\nid: 123\ndata: x\n\n");
        let blank_type = SseEvent { event: Some("\r\n".into()), id: Some(String::new()), ..ev("x") };
        assert_eq!(encode(&blank_type), "id: \ndata: x\n\n");
        assert_eq!(encode_comment("keep-alive"), ": keep-alive\n\n");
        assert_eq!(encode_comment("a\nb"), ": a\n: b\n\n");
    }

    #[test]
    fn maps_to_invalid_agent_response() {
        let err = A2AError::from(SseError::EventTooLarge { limit: 8 });
        assert_eq!(err.kind, ErrorKind::InvalidAgentResponse);
        assert!(err.message.contains('8'), "{}", err.message);
    }

    /// What the decoder gives back for an encoded event: line breaks in data become LF, and the
    /// characters the encoder strips are gone.
    fn normalised(e: &SseEvent) -> SseEvent {
        let event = e.event.as_ref().map(|s| s.replace(['\r', '\n'], "")).filter(|s| !s.is_empty());
        let id = e.id.as_ref().map(|s| s.replace(['\r', '\n', '\0'], ""));
        SseEvent { event, data: e.data.replace("\r\n", "\n").replace('\r', "\n"), id, retry: e.retry }
    }

    fn text() -> impl Strategy<Value = String> {
        let special = prop::sample::select(vec!['\n', '\r', ' ', ':', '\0', '\u{FEFF}', '\u{e9}', '\u{1F600}']);
        prop::collection::vec(prop_oneof![any::<char>(), special], 0..24).prop_map(|cs| cs.into_iter().collect())
    }

    fn sse_event() -> impl Strategy<Value = SseEvent> {
        (prop::option::of(text()), text(), prop::option::of(text()), prop::option::of(any::<u64>()))
            .prop_map(|(event, data, id, retry)| SseEvent { event, data, id, retry })
    }

    /// `bytes` cut at the given points.
    fn split<'a>(bytes: &'a [u8], cuts: &[prop::sample::Index]) -> Vec<&'a [u8]> {
        let mut ends: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
        ends.sort_unstable();
        ends.push(bytes.len());
        let mut start = 0;
        ends.into_iter().map(|end| &bytes[std::mem::replace(&mut start, end)..end]).collect()
    }

    /// Byte soup biased towards SSE syntax, so that fields, breaks and BOMs actually occur.
    fn soup() -> impl Strategy<Value = Vec<u8>> {
        let tokens: Vec<&[u8]> = vec![
            b"data",
            b"event",
            b"id",
            b"retry",
            b":",
            b" ",
            b"\r",
            b"\n",
            b"\r\n",
            b"\xEF\xBB\xBF",
            b"\xEF",
            b"\0",
            b"7",
            b"x",
            b"\xFF",
            "\u{e9}".as_bytes(),
        ];
        let token =
            prop_oneof![any::<u8>().prop_map(|b| vec![b]), prop::sample::select(tokens).prop_map(<[u8]>::to_vec)];
        prop::collection::vec(token, 0..120).prop_map(|ts| ts.concat())
    }

    proptest! {
        #[test]
        fn word_scan_finds_the_first_break(bytes in soup(), skip in 0usize..16) {
            let bytes = &bytes[skip.min(bytes.len())..];
            prop_assert_eq!(find_line_break(bytes), bytes.iter().position(|&b| b == b'\n' || b == b'\r'));
        }

        #[test]
        fn round_trip_over_any_chunking(
            evs in prop::collection::vec(sse_event(), 0..8),
            cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
            keep_alives in any::<bool>(),
        ) {
            let mut stream = String::new();
            for e in &evs {
                if keep_alives {
                    stream.push_str(&encode_comment("ping"));
                }
                encode_into(e, &mut stream);
            }
            let want: Vec<_> = evs.iter().map(|e| Ok(normalised(e))).collect();
            prop_assert_eq!(decode_chunks(BIG, split(stream.as_bytes(), &cuts)), want);
        }

        #[test]
        fn any_bytes_decode_the_same_however_chunked(
            bytes in soup(),
            limit in 0usize..48,
            cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
        ) {
            // decode_chunks also checks that the held line never exceeds the limit.
            let whole = decode_chunks(limit, [&bytes[..]]);
            prop_assert_eq!(&decode_chunks(limit, split(&bytes, &cuts)), &whole);
            prop_assert_eq!(&decode_chunks(limit, bytes.chunks(1)), &whole);
            let unlimited = decode_chunks(BIG, [&bytes[..]]);
            let too_large = unlimited.iter().any(|r| matches!(r, Err(SseError::EventTooLarge { .. })));
            prop_assert!(!too_large, "no limit, yet {:?}", unlimited);
        }
    }
}
