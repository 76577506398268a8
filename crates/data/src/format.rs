//! The chunk file format, byte by byte (see the crate docs for the table), and the
//! checked decoder: any byte string either decodes to a validated [`Chunk`] or gives a
//! [`ChunkError`]; it never panics and never allocates more than the header's checked
//! payload length allows.

use std::io::{Read, Write};

use flate2::{Compression, read::DeflateDecoder, write::DeflateEncoder};
use xq_core::{Color, Move, Piece, Position, Role, Setup};

use crate::record::{Chunk, ChunkMeta, GameRecord, PolicyEntry, PositionRecord, RecordError, Wdl};

/// The first 8 bytes of every chunk file. PNG-style: the high byte catches 7-bit
/// transfers, `\r\n` and `\n` catch line-ending conversion, `\x1a` stops `type` on DOS.
pub const MAGIC: [u8; 8] = *b"\x89XQC\r\n\x1a\n";
/// The version of the layout described in the crate docs. Readers reject others.
pub const FORMAT_VERSION: u16 = 1;
/// Compression method 1: raw DEFLATE (RFC 1951).
pub const COMPRESSION_DEFLATE: u16 = 1;
/// Size of the fixed file header that precedes the compressed payload.
pub const HEADER_LEN: usize = 56;
/// Largest uncompressed payload a reader accepts (256 MiB). A chunk is meant to hold
/// thousands of positions, not millions; the bound keeps a damaged or hostile header
/// from making the reader allocate without limit.
pub const MAX_PAYLOAD: u32 = 256 << 20;
/// The file name extension of finished chunks; writers add `.tmp` while writing.
pub const EXTENSION: &str = "xqc";

/// Why bytes are not a valid chunk. The reader returns one per file; the window logs
/// it with the file name and skips the file.
#[derive(Debug, thiserror::Error)]
pub enum ChunkError {
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    #[error("truncated: {found} bytes, expected at least {expected}")]
    Truncated { expected: u64, found: u64 },
    #[error("not a chunk file (bad magic bytes)")]
    BadMagic,
    #[error("unsupported format version {found} (this reader knows {FORMAT_VERSION})")]
    UnsupportedVersion { found: u16 },
    #[error("unsupported compression method {0}")]
    UnsupportedCompression(u16),
    #[error("header checksum mismatch (stored {stored:#010x}, computed {computed:#010x})")]
    HeaderChecksum { stored: u32, computed: u32 },
    #[error("payload of {0} bytes is larger than the {MAX_PAYLOAD}-byte limit")]
    PayloadTooLarge(u32),
    #[error("{0} bytes after the end of the payload")]
    TrailingBytes(u64),
    #[error("payload does not decompress: {0}")]
    Decompress(String),
    #[error("payload decompresses to {found} bytes, header says {expected}")]
    PayloadLength { expected: u64, found: u64 },
    #[error("compressed data checksum mismatch (stored {stored:#010x}, computed {computed:#010x})")]
    CompressedChecksum { stored: u32, computed: u32 },
    #[error("payload checksum mismatch (stored {stored:#010x}, computed {computed:#010x})")]
    PayloadChecksum { stored: u32, computed: u32 },
    #[error("malformed payload at byte {offset}: {what}")]
    Malformed { offset: usize, what: String },
    #[error(
        "window manifest expects {expected} records (used from {first}), the file holds {found}"
    )]
    ManifestMismatch {
        expected: usize,
        first: usize,
        found: usize,
    },
    #[error("invalid content: {0}")]
    Invalid(#[from] RecordError),
}

/// The fixed header, readable without decompressing: enough to size a replay window
/// from thousands of files by reading 56 bytes of each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHeader {
    pub format_version: u16,
    pub compression: u16,
    pub encoding_version: u32,
    pub policy_index_version: u32,
    pub games: u32,
    pub records: u32,
    pub seed: u64,
    pub payload_len: u32,
    pub compressed_len: u32,
    pub payload_crc: u32,
    /// CRC-32 of the compressed bytes: catches damage that decompression would not
    /// see (padding bits after the last DEFLATE block) before any decompression work.
    pub compressed_crc: u32,
}

/// Parses and checks the fixed header (magic, version, compression, header CRC,
/// payload bound).
///
/// # Errors
/// [`ChunkError::Truncated`] for fewer than [`HEADER_LEN`] bytes, else the first
/// failed check.
pub fn parse_header(bytes: &[u8]) -> Result<FileHeader, ChunkError> {
    if bytes.len() < HEADER_LEN {
        // Report bad magic first when we can: a short text file is not a truncated chunk.
        if bytes.len() >= MAGIC.len() && bytes[..MAGIC.len()] != MAGIC {
            return Err(ChunkError::BadMagic);
        }
        return Err(ChunkError::Truncated {
            expected: HEADER_LEN as u64,
            found: bytes.len() as u64,
        });
    }
    if bytes[..8] != MAGIC {
        return Err(ChunkError::BadMagic);
    }
    let u16_at = |o: usize| u16::from_le_bytes([bytes[o], bytes[o + 1]]);
    let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().expect("4 bytes"));
    let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().expect("8 bytes"));
    let format_version = u16_at(8);
    if format_version != FORMAT_VERSION {
        return Err(ChunkError::UnsupportedVersion {
            found: format_version,
        });
    }
    let stored = u32_at(52);
    let computed = crc32fast::hash(&bytes[..52]);
    if stored != computed {
        return Err(ChunkError::HeaderChecksum { stored, computed });
    }
    let compression = u16_at(10);
    if compression != COMPRESSION_DEFLATE {
        return Err(ChunkError::UnsupportedCompression(compression));
    }
    let header = FileHeader {
        format_version,
        compression,
        encoding_version: u32_at(12),
        policy_index_version: u32_at(16),
        games: u32_at(20),
        records: u32_at(24),
        seed: u64_at(28),
        payload_len: u32_at(36),
        compressed_len: u32_at(40),
        payload_crc: u32_at(44),
        compressed_crc: u32_at(48),
    };
    if header.payload_len > MAX_PAYLOAD {
        return Err(ChunkError::PayloadTooLarge(header.payload_len));
    }
    // DEFLATE expands incompressible data by a few bytes per 64 KiB block at most.
    if u64::from(header.compressed_len) > max_compressed_len(header.payload_len) {
        return Err(ChunkError::PayloadTooLarge(header.compressed_len));
    }
    Ok(header)
}

/// The largest compressed size a payload of `payload_len` bytes can have (stored
/// blocks: 5 bytes of overhead per 64 KiB block, plus slack).
fn max_compressed_len(payload_len: u32) -> u64 {
    let n = u64::from(payload_len);
    n + 5 * (n / 65_535 + 1) + 64
}

/// Serializes a chunk to file bytes (header plus compressed payload).
///
/// The chunk is validated first, so a writer cannot produce a file its readers reject.
///
/// # Errors
/// [`ChunkError::Invalid`] for content that fails [`Chunk::validate`], or a payload
/// over [`MAX_PAYLOAD`].
pub fn encode_chunk(chunk: &Chunk) -> Result<Vec<u8>, ChunkError> {
    chunk.validate()?;
    let games = u32::try_from(chunk.games.len()).map_err(|_| RecordError::TooLarge {
        what: "more than 2^32 games".into(),
    })?;
    let records = u32::try_from(chunk.records.len()).map_err(|_| RecordError::TooLarge {
        what: "more than 2^32 records".into(),
    })?;
    let payload = encode_payload(chunk)?;
    let payload_len = u32::try_from(payload.len())
        .ok()
        .filter(|&n| n <= MAX_PAYLOAD)
        .ok_or_else(|| RecordError::TooLarge {
            what: format!("payload of {} bytes", payload.len()),
        })?;
    let mut enc = DeflateEncoder::new(Vec::with_capacity(payload.len() / 3), Compression::new(6));
    enc.write_all(&payload)?;
    let compressed = enc.finish()?;
    let compressed_len = u32::try_from(compressed.len()).map_err(|_| RecordError::TooLarge {
        what: "compressed payload over 4 GiB".into(),
    })?;

    let mut out = Vec::with_capacity(HEADER_LEN + compressed.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&COMPRESSION_DEFLATE.to_le_bytes());
    out.extend_from_slice(&chunk.meta.encoding_version.to_le_bytes());
    out.extend_from_slice(&chunk.meta.policy_index_version.to_le_bytes());
    out.extend_from_slice(&games.to_le_bytes());
    out.extend_from_slice(&records.to_le_bytes());
    out.extend_from_slice(&chunk.meta.seed.to_le_bytes());
    out.extend_from_slice(&payload_len.to_le_bytes());
    out.extend_from_slice(&compressed_len.to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&compressed).to_le_bytes());
    let header_crc = crc32fast::hash(&out);
    out.extend_from_slice(&header_crc.to_le_bytes());
    debug_assert_eq!(out.len(), HEADER_LEN);
    out.extend_from_slice(&compressed);
    Ok(out)
}

/// Decodes and validates file bytes.
///
/// # Errors
/// Whatever is wrong first: header, length, decompression, checksum, structure, or
/// content (an illegal move, a record pointing nowhere).
pub fn decode_chunk(bytes: &[u8]) -> Result<Chunk, ChunkError> {
    let header = parse_header(bytes)?;
    let body = &bytes[HEADER_LEN..];
    let compressed_len = u64::from(header.compressed_len);
    if (body.len() as u64) < compressed_len {
        return Err(ChunkError::Truncated {
            expected: HEADER_LEN as u64 + compressed_len,
            found: bytes.len() as u64,
        });
    }
    if (body.len() as u64) > compressed_len {
        return Err(ChunkError::TrailingBytes(
            body.len() as u64 - compressed_len,
        ));
    }
    let computed = crc32fast::hash(body);
    if computed != header.compressed_crc {
        return Err(ChunkError::CompressedChecksum {
            stored: header.compressed_crc,
            computed,
        });
    }
    let expected = u64::from(header.payload_len);
    let mut payload = Vec::with_capacity(header.payload_len as usize);
    // One byte more than promised is read so that a payload that is too long shows.
    DeflateDecoder::new(body)
        .take(expected + 1)
        .read_to_end(&mut payload)
        .map_err(|e| ChunkError::Decompress(e.to_string()))?;
    if payload.len() as u64 != expected {
        return Err(ChunkError::PayloadLength {
            expected,
            found: payload.len() as u64,
        });
    }
    let computed = crc32fast::hash(&payload);
    if computed != header.payload_crc {
        return Err(ChunkError::PayloadChecksum {
            stored: header.payload_crc,
            computed,
        });
    }
    let chunk = decode_payload(&header, &payload)?;
    chunk.validate()?;
    Ok(chunk)
}

// --- Payload -------------------------------------------------------------------------

/// Board nibble: 0 empty, 1..=7 Red General..Soldier, 9..=15 Black General..Soldier.
fn piece_nibble(p: Option<Piece>) -> u8 {
    match p {
        None => 0,
        Some(p) => (p.color.index() as u8) * 8 + p.role.index() as u8 + 1,
    }
}

fn nibble_piece(n: u8) -> Option<Option<Piece>> {
    match n {
        0 => Some(None),
        1..=7 => Some(Some(Piece::new(Color::Red, Role::ALL[usize::from(n - 1)]))),
        9..=15 => Some(Some(Piece::new(
            Color::Black,
            Role::ALL[usize::from(n - 9)],
        ))),
        _ => None,
    }
}

/// The 50-byte packed position: 45 bytes of board nibbles (square `2k` in the low
/// nibble of byte `k`, square `2k+1` in the high nibble), side to move, no-capture
/// plies (u16), move number (u16).
fn put_position(out: &mut Vec<u8>, pos: &Position) {
    let setup = pos.to_setup();
    for pair in setup.board.chunks_exact(2) {
        out.push(piece_nibble(pair[0]) | (piece_nibble(pair[1]) << 4));
    }
    out.push(setup.turn.index() as u8);
    out.extend_from_slice(&(setup.halfmoves.min(u32::from(u16::MAX)) as u16).to_le_bytes());
    out.extend_from_slice(&(setup.fullmoves.min(u32::from(u16::MAX)) as u16).to_le_bytes());
}

fn encode_payload(chunk: &Chunk) -> Result<Vec<u8>, ChunkError> {
    let mut out = Vec::with_capacity(64 + chunk.games.len() * 400 + chunk.records.len() * 120);
    let creator = chunk.meta.creator.as_bytes();
    let creator_len = u16::try_from(creator.len()).map_err(|_| RecordError::TooLarge {
        what: "creator string over 65535 bytes".into(),
    })?;
    out.extend_from_slice(&creator_len.to_le_bytes());
    out.extend_from_slice(creator);
    for game in &chunk.games {
        put_position(&mut out, &game.start);
        out.extend_from_slice(&(game.moves.len() as u16).to_le_bytes());
        for m in &game.moves {
            out.extend_from_slice(&m.to_u16().to_le_bytes());
        }
    }
    for rec in &chunk.records {
        out.extend_from_slice(&rec.game.to_le_bytes());
        out.extend_from_slice(&rec.ply.to_le_bytes());
        out.push(match rec.result {
            Some(w) => w.index() as u8,
            None => 3,
        });
        out.extend_from_slice(&rec.plies_left.to_le_bytes());
        out.extend_from_slice(&rec.weight.to_le_bytes());
        for v in rec.root_wdl {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&rec.policy_len.to_le_bytes());
        for e in chunk.policy_of(rec) {
            out.extend_from_slice(&e.mv.to_u16().to_le_bytes());
            out.extend_from_slice(&e.weight.to_le_bytes());
        }
    }
    Ok(out)
}

/// A bounds-checked little-endian cursor over the payload.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], ChunkError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| ChunkError::Malformed {
                offset: self.pos,
                what: format!("payload ends inside {what}"),
            })?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self, what: &str) -> Result<u8, ChunkError> {
        Ok(self.take(1, what)?[0])
    }
    fn u16(&mut self, what: &str) -> Result<u16, ChunkError> {
        let b = self.take(2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self, what: &str) -> Result<u32, ChunkError> {
        Ok(u32::from_le_bytes(
            self.take(4, what)?.try_into().expect("4 bytes"),
        ))
    }
    fn f32(&mut self, what: &str) -> Result<f32, ChunkError> {
        Ok(f32::from_le_bytes(
            self.take(4, what)?.try_into().expect("4 bytes"),
        ))
    }
    fn malformed(&self, at: usize, what: impl Into<String>) -> ChunkError {
        ChunkError::Malformed {
            offset: at,
            what: what.into(),
        }
    }
    fn mv(&mut self, what: &str) -> Result<Move, ChunkError> {
        let at = self.pos;
        let v = self.u16(what)?;
        Move::from_u16(v)
            .ok_or_else(|| self.malformed(at, format!("{what}: {v:#06x} is not a move")))
    }
    fn position(&mut self) -> Result<Position, ChunkError> {
        let at = self.pos;
        let packed = self.take(45, "a board")?;
        let mut setup = Setup::empty();
        for (k, &b) in packed.iter().enumerate() {
            for (half, n) in [(0, b & 0x0f), (1, b >> 4)] {
                setup.board[2 * k + half] = nibble_piece(n).ok_or_else(|| {
                    self.malformed(at + k, format!("board nibble {n} is no piece"))
                })?;
            }
        }
        let turn_at = self.pos;
        setup.turn = match self.u8("side to move")? {
            0 => Color::Red,
            1 => Color::Black,
            t => return Err(self.malformed(turn_at, format!("side to move {t}"))),
        };
        setup.halfmoves = u32::from(self.u16("no-capture counter")?);
        setup.fullmoves = u32::from(self.u16("move number")?);
        Position::from_setup(setup).map_err(|e| self.malformed(at, format!("start position: {e}")))
    }
}

fn decode_payload(header: &FileHeader, payload: &[u8]) -> Result<Chunk, ChunkError> {
    let mut c = Cursor {
        bytes: payload,
        pos: 0,
    };
    let creator_len = c.u16("creator length")?;
    let creator_at = c.pos;
    let creator = std::str::from_utf8(c.take(usize::from(creator_len), "creator")?)
        .map_err(|_| c.malformed(creator_at, "creator is not UTF-8"))?
        .to_owned();
    // Counts come from the checksummed header, but each element also needs bytes, so
    // capacity is bounded by what the payload could hold.
    let mut games = Vec::with_capacity((header.games as usize).min(payload.len() / 52));
    for _ in 0..header.games {
        let start = c.position()?;
        let n = c.u16("move count")?;
        let mut moves = Vec::with_capacity(usize::from(n));
        for _ in 0..n {
            moves.push(c.mv("game move")?);
        }
        games.push(GameRecord { start, moves });
    }
    let mut records = Vec::with_capacity((header.records as usize).min(payload.len() / 27));
    let mut policy = Vec::new();
    for _ in 0..header.records {
        let game = c.u32("record game")?;
        let ply = c.u16("record ply")?;
        let result_at = c.pos;
        let result = match c.u8("record result")? {
            0 => Some(Wdl::Win),
            1 => Some(Wdl::Draw),
            2 => Some(Wdl::Loss),
            3 => None,
            r => return Err(c.malformed(result_at, format!("result code {r}"))),
        };
        let plies_left = c.u16("plies left")?;
        let weight = c.f32("weight")?;
        let root_wdl = [
            c.f32("root value")?,
            c.f32("root value")?,
            c.f32("root value")?,
        ];
        let policy_len = c.u16("policy length")?;
        let policy_start = u32::try_from(policy.len())
            .map_err(|_| c.malformed(c.pos, "more than 2^32 policy entries"))?;
        for _ in 0..policy_len {
            let mv = c.mv("policy move")?;
            let weight = c.u16("policy weight")?;
            policy.push(PolicyEntry { mv, weight });
        }
        records.push(PositionRecord {
            game,
            ply,
            result,
            plies_left,
            weight,
            root_wdl,
            policy_start,
            policy_len,
        });
    }
    if c.pos != payload.len() {
        return Err(c.malformed(
            c.pos,
            format!("{} unread bytes at the end", payload.len() - c.pos),
        ));
    }
    let meta = ChunkMeta {
        encoding_version: header.encoding_version,
        policy_index_version: header.policy_index_version,
        creator,
        seed: header.seed,
    };
    Ok(Chunk {
        meta,
        games,
        records,
        policy,
    })
}
