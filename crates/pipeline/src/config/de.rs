//! The spanned deserializer: serde reads the config's tree through it rather than
//! through toml's, so that the error type is [`ConfigError`]: an unknown key arrives
//! through [`serde::de::Error::unknown_field`] with the key itself (toml's error would
//! keep only serde's sentence), and each error is placed with the spans the parser
//! kept, also inside the internally tagged enums (`[train.window]`) that serde reads
//! from a buffer.

use std::{
    borrow::Cow,
    fmt,
    ops::Range,
    path::{Path, PathBuf},
};

use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};
use toml::{
    Spanned,
    de::{DeTable, DeValue},
};

/// A value of the parsed file, with its place in the text.
pub type Node<'a> = Spanned<DeValue<'a>>;

/// What is wrong with a config.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Problem {
    /// The file cannot be read.
    #[error("cannot read config: {0}")]
    Read(String),
    /// Not TOML: the parser's message and the offending line.
    #[error("{0}")]
    Syntax(String),
    /// A key that no struct of the table owns (`table` is the dotted table path, empty
    /// for the top level, where the keys are sections), and the owned key it is
    /// closest to, if it looks like a typo of one.
    #[error("{}", unknown(table, key, *suggestion))]
    UnknownKey {
        table: String,
        key: String,
        suggestion: Option<&'static str>,
    },
    /// A value of the wrong type or shape (serde's message), at its dotted key path.
    #[error("{}{message}", prefix(key))]
    BadValue { key: String, message: String },
    /// A value of the right type but out of range; the owner's message names the key.
    #[error("{0}")]
    Invalid(String),
}

fn unknown(table: &str, key: &str, suggestion: Option<&str>) -> String {
    let mut s = if table.is_empty() {
        format!("unknown section [{key}]")
    } else {
        format!("[{table}] unknown key \"{key}\"")
    };
    if let Some(k) = suggestion {
        s += &format!(" (did you mean \"{k}\"?)");
    }
    s
}

/// The key of `known` that `key` is a likely typo of: at most one edit (insertion,
/// deletion, substitution) per four characters, and at least one allowed.
fn closest(key: &str, known: impl IntoIterator<Item = &'static str>) -> Option<&'static str> {
    let limit = (key.chars().count() / 4).max(1);
    known
        .into_iter()
        .map(|k| (edit_distance(key, k), k))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, k)| k)
}

/// Levenshtein distance in characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

fn prefix(key: &str) -> String {
    if key.is_empty() {
        String::new()
    } else {
        format!("{key}: ")
    }
}

/// A refused config: the problem, and where (file and line when known).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}{problem}", location(.file, .line))]
pub struct ConfigError {
    pub file: Option<PathBuf>,
    /// 1-based line of the key or value at fault (none for range checks, which look at
    /// the values after parsing).
    pub line: Option<usize>,
    /// Boxed: the error travels in every `Result` of the deserializer.
    pub problem: Box<Problem>,
    /// Byte range of the key or value at fault, until [`ConfigError::locate`] turns it
    /// into a line.
    span: Option<Range<usize>>,
}

fn location(file: &Option<PathBuf>, line: &Option<usize>) -> String {
    match (file, line) {
        (Some(f), Some(l)) => format!("{}:{l}: ", f.display()),
        (Some(f), None) => format!("{}: ", f.display()),
        (None, Some(l)) => format!("line {l}: "),
        (None, None) => String::new(),
    }
}

impl ConfigError {
    fn new(problem: Problem, span: Option<Range<usize>>) -> ConfigError {
        ConfigError {
            file: None,
            line: None,
            problem: Box::new(problem),
            span,
        }
    }

    /// The file could not be read.
    pub fn read(e: &std::io::Error) -> ConfigError {
        ConfigError::new(Problem::Read(e.to_string()), None)
    }

    /// A range check that failed (the message names the key).
    pub fn invalid(message: impl Into<String>) -> ConfigError {
        ConfigError::new(Problem::Invalid(message.into()), None)
    }

    /// Names the file and turns the byte span into the line number of `text`.
    #[must_use]
    pub fn locate(mut self, text: &str, file: Option<&Path>) -> ConfigError {
        self.file = file.map(Path::to_path_buf);
        if let Some(span) = &self.span {
            let at = span.start.min(text.len());
            self.line = Some(text[..at].matches('\n').count() + 1);
        }
        self
    }

    /// Places an error raised under `key` of `table` (the dotted path of the table
    /// holding it), unless an inner table placed it already.
    fn place(mut self, table: &str, key: &str, span: Range<usize>) -> ConfigError {
        if self.span.is_some() {
            return self;
        }
        match &mut *self.problem {
            Problem::UnknownKey { table: t, .. } => *t = table.to_owned(),
            Problem::BadValue { key: k, .. } => *k = child(table, key),
            Problem::Read(_) | Problem::Syntax(_) | Problem::Invalid(_) => {}
        }
        self.span = Some(span);
        self
    }

    /// Places an unknown key that serde found in `node`'s table after reading it whole
    /// (an internally tagged enum, read from serde's buffer, where no span is seen).
    fn place_unknown_in(self, table: &str, keys: &[(String, Range<usize>)]) -> ConfigError {
        let found = match &*self.problem {
            Problem::UnknownKey { key, .. } if self.span.is_none() => {
                keys.iter().find(|(k, _)| k == key).cloned()
            }
            _ => None,
        };
        match found {
            Some((key, span)) => self.place(table, &key, span),
            None => self,
        }
    }
}

impl de::Error for ConfigError {
    fn custom<T: fmt::Display>(msg: T) -> ConfigError {
        ConfigError::new(
            Problem::BadValue {
                key: String::new(),
                message: msg.to_string(),
            },
            None,
        )
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> ConfigError {
        ConfigError::new(
            Problem::UnknownKey {
                table: String::new(),
                key: field.to_owned(),
                suggestion: closest(field, expected.iter().copied()),
            },
            None,
        )
    }
}

fn child(table: &str, key: &str) -> String {
    if table.is_empty() {
        key.to_owned()
    } else {
        format!("{table}.{key}")
    }
}

/// Parses TOML text into toml's spanned tree: the one parse of a config file.
///
/// # Errors
/// The parser's first error, placed at its span.
pub fn parse(text: &str) -> Result<Spanned<DeTable<'_>>, ConfigError> {
    DeTable::parse(text).map_err(|e| {
        let mut message = e.message().trim().replace('\n', " ");
        if let Some(span) = e.span() {
            // The offending line's text: the parser's message does not name the key.
            let at = span.start.min(text.len());
            let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
            let src = text[line_start..].lines().next().unwrap_or("").trim();
            message = format!("{message} (`{src}`)");
        }
        ConfigError::new(Problem::Syntax(message), e.span())
    })
}

/// The keys of a table node with their spans, to place an unknown key found late.
fn keys_of(node: &Node<'_>) -> Vec<(String, Range<usize>)> {
    match node.get_ref() {
        DeValue::Table(t) => t
            .keys()
            .map(|k| (k.get_ref().to_string(), k.span()))
            .collect(),
        _ => Vec::new(),
    }
}

/// Reads `node` (the value at dotted key path `path`) as a `T`.
///
/// # Errors
/// An unknown key, a value of the wrong type or a missing one, placed (not yet located:
/// see [`ConfigError::locate`]).
pub fn deserialize<'a, T: de::Deserialize<'a>>(
    node: Node<'a>,
    path: &str,
) -> Result<T, ConfigError> {
    let keys = keys_of(&node);
    let span = node.span();
    T::deserialize(NodeDeserializer {
        node,
        path: path.to_owned(),
    })
    .map_err(|e| {
        let e = e.place_unknown_in(path, &keys);
        match path.rsplit_once('.') {
            Some((table, key)) => e.place(table, key, span),
            None => e.place("", path, span),
        }
    })
}

/// Splits a table between the structs that own its keys: entry `i` of the result holds
/// the keys in `owners[i]` (each a struct's field list, see [`fields_of`]). A key no
/// owner takes is an unknown key of the table at `path`.
///
/// # Errors
/// `node` is not a table, or a key nobody owns.
pub fn split_table<'a, const N: usize>(
    node: Node<'a>,
    path: &str,
    owners: [&'static [&'static str]; N],
) -> Result<[Node<'a>; N], ConfigError> {
    let span = node.span();
    let DeValue::Table(table) = node.into_inner() else {
        return Err(ConfigError::new(
            Problem::BadValue {
                key: path.to_owned(),
                message: "expected a table".into(),
            },
            Some(span),
        ));
    };
    let mut parts: [DeTable<'a>; N] = std::array::from_fn(|_| DeTable::new());
    for (key, value) in table {
        let Some(i) = owners
            .iter()
            .position(|o| o.contains(&key.get_ref().as_ref()))
        else {
            return Err(ConfigError::new(
                Problem::UnknownKey {
                    table: path.to_owned(),
                    key: key.get_ref().to_string(),
                    suggestion: closest(
                        key.get_ref(),
                        owners.iter().flat_map(|o| o.iter().copied()),
                    ),
                },
                Some(key.span()),
            ));
        };
        parts[i].insert(key, value);
    }
    Ok(parts.map(|t| Spanned::new(span.clone(), DeValue::Table(t))))
}

/// The field names of a struct, as its derived `Deserialize` declares them: the keys it
/// owns, without a list kept by hand. Empty for a type that is not a struct.
pub fn fields_of<'de, T: de::Deserialize<'de>>() -> &'static [&'static str] {
    /// Records the field list serde passes to `deserialize_struct`, then stops.
    struct Fields<'a>(&'a mut &'static [&'static str]);

    impl<'de> de::Deserializer<'de> for Fields<'_> {
        type Error = de::value::Error;

        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("not a struct"))
        }

        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _name: &'static str,
            fields: &'static [&'static str],
            _visitor: V,
        ) -> Result<V::Value, Self::Error> {
            *self.0 = fields;
            Err(de::Error::custom("fields recorded"))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map
            enum identifier ignored_any
        }
    }

    let mut fields: &'static [&'static str] = &[];
    // The error is the point: the field list is recorded on the way.
    let _ = T::deserialize(Fields(&mut fields));
    fields
}

/// serde's view of a [`Node`]; `path` is the node's dotted key path.
struct NodeDeserializer<'a> {
    node: Node<'a>,
    path: String,
}

impl<'de> de::Deserializer<'de> for NodeDeserializer<'de> {
    type Error = ConfigError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ConfigError> {
        let path = self.path;
        match self.node.into_inner() {
            DeValue::String(Cow::Borrowed(s)) => visitor.visit_borrowed_str(s),
            DeValue::String(Cow::Owned(s)) => visitor.visit_string(s),
            DeValue::Integer(i) => match i64::from_str_radix(i.as_str(), i.radix()) {
                Ok(v) => visitor.visit_i64(v),
                Err(_) => match u64::from_str_radix(i.as_str(), i.radix()) {
                    Ok(v) => visitor.visit_u64(v),
                    Err(_) => Err(de::Error::custom(format!("integer {i} is out of range"))),
                },
            },
            DeValue::Float(f) => match f.as_str().parse::<f64>() {
                Ok(v) => visitor.visit_f64(v),
                Err(_) => Err(de::Error::custom(format!("float {f} is out of range"))),
            },
            DeValue::Boolean(b) => visitor.visit_bool(b),
            DeValue::Datetime(d) => visitor.visit_string(d.to_string()),
            DeValue::Array(a) => visitor.visit_seq(ArrayAccess {
                items: a.into_iter().enumerate(),
                path,
            }),
            DeValue::Table(t) => visitor.visit_map(TableAccess {
                entries: t.into_iter(),
                pending: None,
                path,
            }),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ConfigError> {
        // TOML has no null: a key that is there is `Some`.
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ConfigError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ConfigError> {
        let path = self.path;
        match self.node.into_inner() {
            // A unit variant by name (`mode = "sync"`).
            DeValue::String(s) => visitor.visit_enum(s.into_deserializer()),
            // An externally tagged variant with data (`{ variant = ... }`).
            DeValue::Table(t) => {
                visitor.visit_enum(de::value::MapAccessDeserializer::new(TableAccess {
                    entries: t.into_iter(),
                    pending: None,
                    path,
                }))
            }
            other => Err(de::Error::custom(format!(
                "invalid type: {}, expected a variant name",
                other.type_str()
            ))),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

/// The entries of a table, each value read at its key path.
struct TableAccess<'a> {
    entries: toml::map::IntoIter<Spanned<Cow<'a, str>>, Node<'a>>,
    /// The key just read and its value, for `next_value_seed`.
    pending: Option<(String, Node<'a>)>,
    path: String,
}

impl<'de> de::MapAccess<'de> for TableAccess<'de> {
    type Error = ConfigError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, ConfigError> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        let span = key.span();
        let key = key.into_inner();
        let name = key.to_string();
        let out = seed
            .deserialize(key.into_deserializer())
            .map_err(|e: ConfigError| e.place(&self.path, &name, span))?;
        self.pending = Some((name, value));
        Ok(Some(out))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, ConfigError> {
        let Some((key, node)) = self.pending.take() else {
            return Err(de::Error::custom("a value without a key"));
        };
        let keys = keys_of(&node);
        let span = node.span();
        let path = child(&self.path, &key);
        seed.deserialize(NodeDeserializer {
            node,
            path: path.clone(),
        })
        .map_err(|e| {
            e.place_unknown_in(&path, &keys)
                .place(&self.path, &key, span)
        })
    }
}

/// The items of an array, each read at `path[i]`.
struct ArrayAccess<'a> {
    items: std::iter::Enumerate<<toml::de::DeArray<'a> as IntoIterator>::IntoIter>,
    path: String,
}

impl<'de> de::SeqAccess<'de> for ArrayAccess<'de> {
    type Error = ConfigError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, ConfigError> {
        let Some((i, node)) = self.items.next() else {
            return Ok(None);
        };
        let keys = keys_of(&node);
        let span = node.span();
        let path = format!("{}[{i}]", self.path);
        seed.deserialize(NodeDeserializer {
            node,
            path: path.clone(),
        })
        .map(Some)
        .map_err(|e| {
            let e = e.place_unknown_in(&path, &keys);
            // The item's own key path: `[rating] opponents[1]: ...`.
            e.place("", &path, span)
        })
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "snake_case")]
    enum Mode {
        Sync,
        Concurrent,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Inner {
        size: u32,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Kinds {
        hex: u64,
        negative: i32,
        float: f64,
        int_as_float: f32,
        flag: bool,
        name: String,
        list: Vec<String>,
        maybe: Option<u8>,
        absent: Option<u8>,
        mode: Mode,
        #[serde(rename = "inner-table")]
        inner: Inner,
    }

    /// A whole document as a `T`, errors located as `RunConfig` locates them.
    fn read<'a, T: Deserialize<'a>>(text: &'a str) -> Result<T, ConfigError> {
        let root = parse(text).map_err(|e| e.locate(text, None))?;
        let span = root.span();
        deserialize(Spanned::new(span, DeValue::Table(root.into_inner())), "")
            .map_err(|e| e.locate(text, None))
    }

    #[test]
    fn values_of_every_kind_reach_the_struct() {
        let k: Kinds = read(
            "hex = 0xff\nnegative = -3\nfloat = 1.5e3\nint_as_float = 2\nflag = true\n\
             name = 'x'\nlist = [\"a\", \"b\"]\nmaybe = 7\nmode = \"concurrent\"\n\
             inner-table = { size = 4 }\n",
        )
        .unwrap();
        assert_eq!(
            k,
            Kinds {
                hex: 255,
                negative: -3,
                float: 1500.0,
                int_as_float: 2.0,
                flag: true,
                name: "x".into(),
                list: vec!["a".into(), "b".into()],
                maybe: Some(7),
                absent: None,
                mode: Mode::Concurrent,
                inner: Inner { size: 4 },
            }
        );
    }

    #[test]
    fn a_misplaced_value_is_named_by_its_key_path_and_line() {
        let e = read::<Inner>("\n\nsize = \"four\"\n").unwrap_err();
        assert_eq!(e.line, Some(3));
        assert_eq!(
            *e.problem,
            Problem::BadValue {
                key: "size".into(),
                message: "invalid type: string \"four\", expected u32".into(),
            }
        );
        let e = read::<Inner>("size = 1\nsise = 2\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        assert_eq!(
            *e.problem,
            Problem::UnknownKey {
                table: String::new(),
                key: "sise".into(),
                suggestion: Some("size"),
            }
        );
        let e = read::<Inner>("size = [\n").unwrap_err();
        assert!(matches!(*e.problem, Problem::Syntax(_)), "{e}");
        assert_eq!(e.line, Some(1));
    }

    #[test]
    fn a_table_is_split_between_its_owners_by_their_fields() {
        #[derive(Debug, Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Other {
            colour: String,
        }
        assert_eq!(fields_of::<Inner>(), ["size"]);
        assert_eq!(fields_of::<Other>(), ["colour"]);
        assert!(fields_of::<u32>().is_empty());
        let text = "[t]\nsize = 3\ncolour = 'red'\n";
        let root = parse(text).unwrap().into_inner();
        let node = root.get("t").unwrap().clone();
        let [a, b] = split_table(
            node.clone(),
            "t",
            [fields_of::<Inner>(), fields_of::<Other>()],
        )
        .unwrap();
        assert_eq!(deserialize::<Inner>(a, "t").unwrap(), Inner { size: 3 });
        assert_eq!(deserialize::<Other>(b, "t").unwrap().colour, "red");
        let e = split_table(node, "t", [fields_of::<Inner>()])
            .unwrap_err()
            .locate(text, Some(Path::new("c.toml")));
        assert_eq!(e.to_string(), "c.toml:3: [t] unknown key \"colour\"");
        let e = split_table(
            parse("[t]\nsze = 3\n").unwrap().into_inner()["t"].clone(),
            "t",
            [fields_of::<Inner>(), fields_of::<Other>()],
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "[t] unknown key \"sze\" (did you mean \"size\"?)"
        );
    }

    #[test]
    fn a_typo_is_matched_to_the_closest_key_and_nothing_else_is() {
        let keys = ["parallel_games", "max_batch", "lr", "blocks"];
        assert_eq!(closest("paralel_games", keys), Some("parallel_games"));
        assert_eq!(closest("blocs", keys), Some("blocks"));
        assert_eq!(closest("r", keys), Some("lr"));
        assert_eq!(closest("lerning_rate", keys), None);
        assert_eq!(closest("batch", keys), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
