//! TF Serving's `--batching_parameters_file`: a `BatchingParameters` message in protobuf
//! text format (tensorflow_serving/servables/tensorflow/session_bundle_config.proto),
//! as TF Serving's documentation shows it (tensorflow_serving/g3doc/serving_config.md,
//! "Batching Configuration"):
//!
//! ```text
//! max_batch_size { value: 32 }
//! batch_timeout_micros { value: 0 }
//! allowed_batch_sizes: 1
//! allowed_batch_sizes: 8
//! allowed_batch_sizes: 32
//! pad_variable_length_inputs: false
//! ```
//!
//! Every field of the message is read (the `Int64Value` / `BoolValue` / `StringValue`
//! wrappers as `name { value: V }`, `name: { ... }` or `name < ... >`, repeated
//! `allowed_batch_sizes` one per line or as a list `[1, 8, 32]`, `#` comments, `,` or
//! `;` between fields). As protobuf's text parser, which TF Serving uses, an unknown
//! field name or a non-repeated field given twice is refused; errors name the line and
//! column.
//!
//! ```
//! use tfreq::formats::parse_params;
//! let p = parse_params("max_batch_size { value: 32 }\nallowed_batch_sizes: [1, 8, 32]\n")?;
//! assert_eq!((p.max_batch_size, p.allowed_batch_sizes), (Some(32), vec![1, 8, 32]));
//! let e = parse_params("max_batch_size { value: 32 }\nmax_batch_sise: 3\n").unwrap_err();
//! assert_eq!((e.line, e.column), (2, 1));
//! # Ok::<(), tfreq::formats::ParamsError>(())
//! ```

use std::fmt;

/// The fields of TF Serving's `BatchingParameters`; `None` where the file leaves a
/// wrapper field out (TF Serving then uses its scheduler's default).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BatchingParameters {
    /// `max_batch_size` (field 1): the largest task (request) the queue takes.
    pub max_batch_size: Option<i64>,
    /// `batch_timeout_micros` (field 2).
    pub batch_timeout_micros: Option<i64>,
    /// `max_enqueued_batches` (field 3).
    pub max_enqueued_batches: Option<i64>,
    /// `num_batch_threads` (field 4).
    pub num_batch_threads: Option<i64>,
    /// `thread_pool_name` (field 5).
    pub thread_pool_name: Option<String>,
    /// `allowed_batch_sizes` (field 6): the sizes batches are padded to.
    pub allowed_batch_sizes: Vec<i64>,
    /// `pad_variable_length_inputs` (field 7).
    pub pad_variable_length_inputs: bool,
    /// `enable_large_batch_splitting` (field 8).
    pub enable_large_batch_splitting: Option<bool>,
    /// `max_execution_batch_size` (field 9).
    pub max_execution_batch_size: Option<i64>,
}

/// A batching parameters file that does not parse: where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct ParamsError {
    /// The line (from 1).
    pub line: usize,
    /// The column (from 1, in characters).
    pub column: usize,
    /// What was found and what was expected.
    pub message: String,
}

/// The largest file read (a real one is a few hundred bytes).
pub const MAX_LEN: usize = 1 << 20;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Int(i128),
    Str(String),
    Punct(char),
    Other(String),
    End,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Ident(s) => write!(f, "{}", crate::escape::escape_short(s.as_bytes(), 60)),
            Tok::Int(n) => write!(f, "{n}"),
            Tok::Str(s) => write!(
                f,
                "the string {:?}",
                crate::escape::escape_short(s.as_bytes(), 60)
            ),
            Tok::Punct(c) => write!(f, "'{c}'"),
            Tok::Other(s) => write!(f, "{:?}", crate::escape::escape_short(s.as_bytes(), 60)),
            Tok::End => f.write_str("the end of the file"),
        }
    }
}

struct Lexer<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    line: usize,
    column: usize,
}

impl Lexer<'_> {
    fn bump(&mut self) -> Option<char> {
        let c = self.chars.next()?;
        if c == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(c)
    }

    fn err(&self, line: usize, column: usize, message: String) -> ParamsError {
        ParamsError {
            line,
            column,
            message,
        }
    }

    /// The next token and where it starts.
    fn next(&mut self) -> Result<(Tok, usize, usize), ParamsError> {
        loop {
            match self.chars.peek() {
                Some(c) if c.is_whitespace() => {
                    self.bump();
                }
                Some('#') => {
                    while self.chars.peek().is_some_and(|c| *c != '\n') {
                        self.bump();
                    }
                }
                _ => break,
            }
        }
        let (line, column) = (self.line, self.column);
        let Some(&c) = self.chars.peek() else {
            return Ok((Tok::End, line, column));
        };
        if c.is_ascii_alphabetic() || c == '_' {
            let mut s = String::new();
            while let Some(&c) = self.chars.peek() {
                if !(c.is_ascii_alphanumeric() || c == '_') || s.len() > 200 {
                    break;
                }
                s.push(c);
                self.bump();
            }
            return Ok((Tok::Ident(s), line, column));
        }
        if c.is_ascii_digit() || c == '-' || c == '+' {
            let mut s = String::new();
            while let Some(&c) = self.chars.peek() {
                if !(c.is_ascii_alphanumeric() || matches!(c, '-' | '+' | '.')) || s.len() > 60 {
                    break;
                }
                s.push(c);
                self.bump();
            }
            return Ok((parse_int(&s).map_or(Tok::Other(s), Tok::Int), line, column));
        }
        if c == '"' || c == '\'' {
            self.bump();
            let mut s = String::new();
            loop {
                match self.bump() {
                    None | Some('\n') => {
                        return Err(self.err(line, column, "a string that does not end".into()));
                    }
                    Some('\\') => match self.bump() {
                        Some('n') => s.push('\n'),
                        Some('t') => s.push('\t'),
                        Some(e) => s.push(e),
                        None => {
                            return Err(self.err(
                                line,
                                column,
                                "a string that does not end".into(),
                            ));
                        }
                    },
                    Some(q) if q == c => break,
                    Some(ch) => s.push(ch),
                }
            }
            return Ok((Tok::Str(s), line, column));
        }
        self.bump();
        if "{}<>[]:,;".contains(c) {
            Ok((Tok::Punct(c), line, column))
        } else {
            Ok((Tok::Other(c.to_string()), line, column))
        }
    }
}

/// A protobuf text integer: decimal, `0x` hex or `0` octal, with an optional sign.
fn parse_int(s: &str) -> Option<i128> {
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let v = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        i128::from_str_radix(h, 16).ok()?
    } else if body.len() > 1 && body.starts_with('0') {
        i128::from_str_radix(&body[1..], 8).ok()?
    } else {
        body.parse::<i128>().ok()?
    };
    Some(if neg { -v } else { v })
}

struct Parser<'a> {
    lex: Lexer<'a>,
    peeked: Option<(Tok, usize, usize)>,
}

impl Parser<'_> {
    fn peek(&mut self) -> Result<&(Tok, usize, usize), ParamsError> {
        if self.peeked.is_none() {
            self.peeked = Some(self.lex.next()?);
        }
        Ok(self.peeked.as_ref().expect("just set"))
    }

    fn next(&mut self) -> Result<(Tok, usize, usize), ParamsError> {
        match self.peeked.take() {
            Some(t) => Ok(t),
            None => self.lex.next(),
        }
    }

    fn eat(&mut self, c: char) -> Result<bool, ParamsError> {
        if self.peek()?.0 == Tok::Punct(c) {
            self.next()?;
            return Ok(true);
        }
        Ok(false)
    }

    fn unexpected<T>(
        &self,
        (t, line, column): (Tok, usize, usize),
        want: &str,
    ) -> Result<T, ParamsError> {
        Err(ParamsError {
            line,
            column,
            message: format!("expected {want}, found {t}"),
        })
    }

    /// A scalar of kind `kind` (`int`, `bool` or `string`) after `name:`.
    fn scalar(&mut self, name: &str, kind: Kind) -> Result<Value, ParamsError> {
        let t = self.next()?;
        match (kind, &t.0) {
            (Kind::Int, Tok::Int(n)) => {
                i64::try_from(*n).map(Value::Int).map_err(|_| ParamsError {
                    line: t.1,
                    column: t.2,
                    message: format!("{name}: {n} does not fit in an int64"),
                })
            }
            (Kind::Bool, Tok::Ident(s)) if matches!(s.as_str(), "true" | "True" | "t") => {
                Ok(Value::Bool(true))
            }
            (Kind::Bool, Tok::Ident(s)) if matches!(s.as_str(), "false" | "False" | "f") => {
                Ok(Value::Bool(false))
            }
            (Kind::Bool, Tok::Int(0)) => Ok(Value::Bool(false)),
            (Kind::Bool, Tok::Int(1)) => Ok(Value::Bool(true)),
            (Kind::Str, Tok::Str(_)) => {
                let Tok::Str(s) = t.0 else { unreachable!() };
                // Adjacent strings concatenate, as in protobuf text.
                let mut s = s;
                while let Tok::Str(_) = self.peek()?.0 {
                    if let (Tok::Str(more), _, _) = self.next()? {
                        s.push_str(&more);
                    }
                }
                Ok(Value::Str(s))
            }
            _ => {
                let want = match kind {
                    Kind::Int => format!("an integer for {name}"),
                    Kind::Bool => format!("true or false for {name}"),
                    Kind::Str => format!("a quoted string for {name}"),
                };
                self.unexpected(t, &want)
            }
        }
    }

    /// The body of a wrapper message (`{ value: V }`), after its name and optional `:`.
    fn wrapper(&mut self, name: &str, kind: Kind) -> Result<Option<Value>, ParamsError> {
        let open = self.next()?;
        let close = match open.0 {
            Tok::Punct('{') => '}',
            Tok::Punct('<') => '>',
            _ => {
                return self.unexpected(
                    open,
                    &format!("'{{' to open {name} (a wrapper: {name} {{ value: V }})"),
                );
            }
        };
        let mut value = None;
        loop {
            let t = self.next()?;
            match &t.0 {
                Tok::Punct(c) if *c == close => return Ok(value),
                Tok::Ident(f) if f == "value" => {
                    if value.is_some() {
                        return Err(ParamsError {
                            line: t.1,
                            column: t.2,
                            message: format!("{name}.value is given twice (a non-repeated field)"),
                        });
                    }
                    if !self.eat(':')? {
                        let t = self.next()?;
                        return self.unexpected(t, "':' after value");
                    }
                    value = Some(self.scalar(name, kind)?);
                    let _ = self.eat(',')? || self.eat(';')?;
                }
                Tok::Ident(f) => {
                    return Err(ParamsError {
                        line: t.1,
                        column: t.2,
                        message: format!(
                            "{name} (a google.protobuf wrapper) has no field named {}; it has only value",
                            crate::escape::escape_short(f.as_bytes(), 60)
                        ),
                    });
                }
                _ => return self.unexpected(t, &format!("value or '{close}' in {name}")),
            }
        }
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Int,
    Bool,
    Str,
}

enum Value {
    Int(i64),
    Bool(bool),
    Str(String),
}

/// Reads a batching parameters file (see the module documentation).
pub fn parse_params(text: &str) -> Result<BatchingParameters, ParamsError> {
    if text.len() > MAX_LEN {
        return Err(ParamsError {
            line: 1,
            column: 1,
            message: format!(
                "{} bytes: a batching parameters file is at most {MAX_LEN} bytes",
                text.len()
            ),
        });
    }
    let mut p = Parser {
        lex: Lexer {
            chars: text.chars().peekable(),
            line: 1,
            column: 1,
        },
        peeked: None,
    };
    let mut out = BatchingParameters::default();
    let mut seen: Vec<&'static str> = Vec::new();
    loop {
        let t = p.next()?;
        let (name, line, column) = match t.0 {
            Tok::End => return Ok(out),
            Tok::Ident(ref n) => (n.clone(), t.1, t.2),
            _ => return p.unexpected(t, "a field name"),
        };
        let field: &'static str = match FIELDS.iter().find(|f| **f == name) {
            Some(f) => f,
            None => {
                return Err(ParamsError {
                    line,
                    column,
                    message: format!(
                        "message tensorflow.serving.BatchingParameters has no field named {}; its fields are {}",
                        crate::escape::escape_short(name.as_bytes(), 60),
                        FIELDS.join(", ")
                    ),
                });
            }
        };
        if field != "allowed_batch_sizes" {
            if seen.contains(&field) {
                return Err(ParamsError {
                    line,
                    column,
                    message: format!("{field} is given twice (a non-repeated field)"),
                });
            }
            seen.push(field);
        }
        let colon = p.eat(':')?;
        match field {
            "allowed_batch_sizes" => {
                if !colon {
                    let t = p.next()?;
                    return p.unexpected(t, "':' after allowed_batch_sizes");
                }
                if p.eat('[')? {
                    if !p.eat(']')? {
                        loop {
                            let Value::Int(n) = p.scalar(field, Kind::Int)? else {
                                unreachable!()
                            };
                            out.allowed_batch_sizes.push(n);
                            if p.eat(']')? {
                                break;
                            }
                            if !p.eat(',')? {
                                let t = p.next()?;
                                return p.unexpected(
                                    t,
                                    "',' or ']' in the list of allowed_batch_sizes",
                                );
                            }
                        }
                    }
                } else {
                    let Value::Int(n) = p.scalar(field, Kind::Int)? else {
                        unreachable!()
                    };
                    out.allowed_batch_sizes.push(n);
                }
            }
            "pad_variable_length_inputs" => {
                if !colon {
                    let t = p.next()?;
                    return p.unexpected(
                        t,
                        "':' after pad_variable_length_inputs (a bool, not a wrapper)",
                    );
                }
                let Value::Bool(b) = p.scalar(field, Kind::Bool)? else {
                    unreachable!()
                };
                out.pad_variable_length_inputs = b;
            }
            _ => {
                let kind = match field {
                    "thread_pool_name" => Kind::Str,
                    "enable_large_batch_splitting" => Kind::Bool,
                    _ => Kind::Int,
                };
                let v = p.wrapper(field, kind)?;
                match (field, v) {
                    (_, None) => {
                        // `name {}`: the wrapper is set, its value the default.
                        match kind {
                            Kind::Int => set_int(&mut out, field, 0),
                            Kind::Bool => out.enable_large_batch_splitting = Some(false),
                            Kind::Str => out.thread_pool_name = Some(String::new()),
                        }
                    }
                    (_, Some(Value::Int(n))) => set_int(&mut out, field, n),
                    (_, Some(Value::Bool(b))) => out.enable_large_batch_splitting = Some(b),
                    (_, Some(Value::Str(s))) => out.thread_pool_name = Some(s),
                }
            }
        }
        let _ = p.eat(',')? || p.eat(';')?;
    }
}

fn set_int(out: &mut BatchingParameters, field: &str, n: i64) {
    let slot = match field {
        "max_batch_size" => &mut out.max_batch_size,
        "batch_timeout_micros" => &mut out.batch_timeout_micros,
        "max_enqueued_batches" => &mut out.max_enqueued_batches,
        "num_batch_threads" => &mut out.num_batch_threads,
        _ => &mut out.max_execution_batch_size,
    };
    *slot = Some(n);
}

/// The fields of `BatchingParameters`, in the proto's order.
const FIELDS: &[&str] = &[
    "max_batch_size",
    "batch_timeout_micros",
    "max_enqueued_batches",
    "num_batch_threads",
    "thread_pool_name",
    "enable_large_batch_splitting",
    "max_execution_batch_size",
    "allowed_batch_sizes",
    "pad_variable_length_inputs",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_generators_file() {
        let p = parse_params(include_str!(
            "../../tests/data/examples/batch/batching_parameters.txt"
        ))
        .unwrap();
        assert_eq!(p.max_batch_size, Some(32));
        assert_eq!(p.batch_timeout_micros, Some(0));
        assert_eq!(p.num_batch_threads, Some(2));
        assert_eq!(p.allowed_batch_sizes, [1, 8, 32]);
        assert!(!p.pad_variable_length_inputs);
        assert_eq!(p.enable_large_batch_splitting, None);
    }

    #[test]
    fn every_form_of_the_fields() {
        let p = parse_params(
            "# comment\nmax_batch_size: { value: 0x20 } ; thread_pool_name < value: 'a' \"b\" >,\n\
             enable_large_batch_splitting { value: True } max_execution_batch_size {value:8}\n\
             allowed_batch_sizes: [4, 8] allowed_batch_sizes: 32 pad_variable_length_inputs: t",
        )
        .unwrap();
        assert_eq!(p.max_batch_size, Some(32));
        assert_eq!(p.thread_pool_name.as_deref(), Some("ab"));
        assert_eq!(p.enable_large_batch_splitting, Some(true));
        assert_eq!(p.max_execution_batch_size, Some(8));
        assert_eq!(p.allowed_batch_sizes, [4, 8, 32]);
        assert!(p.pad_variable_length_inputs);
        assert_eq!(parse_params("").unwrap(), BatchingParameters::default());
    }

    #[test]
    fn errors_say_where_and_what() {
        let cases = [
            ("max_batch_size: 32", 1, 17, "'{' to open max_batch_size"),
            (
                "max_batch_size { value: 32 }\nmax_batch_size { value: 8 }",
                2,
                1,
                "twice",
            ),
            (
                "allowed_batch_sizes: 1\n  allowed_batch_size: 2",
                2,
                3,
                "no field named allowed_batch_size",
            ),
            ("allowed_batch_sizes: [1, 8", 1, 27, "',' or ']'"),
            ("allowed_batch_sizes: x", 1, 22, "an integer"),
            ("max_batch_size { valu: 3 }", 1, 18, "no field named valu"),
            (
                "max_batch_size { value: 99999999999999999999 }",
                1,
                25,
                "int64",
            ),
            ("pad_variable_length_inputs: yes", 1, 29, "true or false"),
            ("thread_pool_name { value: \"a }", 1, 27, "does not end"),
            ("max_batch_size { value: 3 ", 1, 27, "the end of the file"),
            ("= 3", 1, 1, "a field name"),
        ];
        for (text, line, column, want) in cases {
            let e = parse_params(text).unwrap_err();
            assert_eq!((e.line, e.column), (line, column), "{text:?}: {e}");
            assert!(e.message.contains(want), "{text:?}: {e}");
        }
    }
}
