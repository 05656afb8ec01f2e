//! The general path on the objects whose members JSON-RPC cares about (the
//! message, or each element of a batch): every layout, every verdict, from the
//! object's start or from where the compact path ([`super::compact`]) declined.

use super::Scanner;
use super::compact::{Compact, ObjAt};
use super::readers::identify_key;
use super::spans::{Fail, ObjSpans, Res, Span};
use crate::parse::error::{Field, Reason};
use crate::parse::ops::tick;

impl Scanner<'_, '_> {
    /// Scans an object at `depth` whose members JSON-RPC cares about.
    fn scan_object(&mut self, depth: usize, spans: &mut ObjSpans) -> Res<()> {
        if depth > self.max_depth {
            return Err(Fail::at(Reason::TooDeep, self.pos));
        }
        let start = self.pos;
        spans.is_object = true;
        self.pos += 1; // '{'
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            spans.whole = Span {
                start: start as u32,
                end: self.pos as u32,
            };
            return Ok(());
        }
        let field = self.member_key()?;
        self.object_members(start, depth, spans, field)
    }

    /// The general path on the object opening at `start`, of level `depth`, after
    /// the compact path ended `how` (declined): from the start of the object, or
    /// from where the compact path stopped.
    #[inline(never)]
    pub(super) fn object_declined(
        &mut self,
        start: usize,
        depth: usize,
        spans: &mut ObjSpans,
        how: Compact,
    ) -> Res<()> {
        let at = match how {
            Compact::Done => return Ok(()),
            Compact::Unexpected => {
                spans.is_object = true;
                return Err(self.unexpected());
            }
            Compact::Restart => {
                *spans = ObjSpans::default();
                self.pos = start;
                return self.scan_object(depth, spans);
            }
            Compact::Resume(at) => at,
        };
        spans.is_object = true;
        let field = match at {
            ObjAt::Value(field) => {
                // The general path takes the whitespace after `:` as well.
                self.skip_ws();
                Some(field)
            }
            ObjAt::AfterValue => {
                if !self.member_next(start, spans)? {
                    return Ok(());
                }
                self.member_key()?
            }
        };
        self.object_members(start, depth, spans, field)
    }

    /// A member's key and `:` at `pos` (after whitespace), and the whitespace after
    /// them: which JSON-RPC member it names, if any.
    #[inline(always)]
    fn member_key(&mut self) -> Res<Option<Field>> {
        tick(1);
        self.skip_ws();
        if self.peek() != Some(b'"') {
            return Err(self.unexpected());
        }
        let ks = self.pos;
        let key_escaped = self.scan_string()?;
        let field = identify_key(self.bytes, ks, self.pos, key_escaped);
        self.skip_ws();
        self.expect(b':')?;
        self.skip_ws();
        Ok(field)
    }

    /// After a member's value in the object opening at `start`: `,` (whether
    /// another member follows), or the closing `}` (the object's span recorded).
    #[inline(always)]
    fn member_next(&mut self, start: usize, spans: &mut ObjSpans) -> Res<bool> {
        self.skip_ws();
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                Ok(true)
            }
            Some(b'}') => {
                self.pos += 1;
                spans.whole = Span {
                    start: start as u32,
                    end: self.pos as u32,
                };
                Ok(false)
            }
            _ => Err(self.unexpected()),
        }
    }

    /// The members of the object opening at `start`, of level `depth`, from the
    /// value (at `pos`) of one named `field`, to the closing `}`.
    #[inline(always)]
    fn object_members(
        &mut self,
        start: usize,
        depth: usize,
        spans: &mut ObjSpans,
        mut field: Option<Field>,
    ) -> Res<()> {
        loop {
            let vs = self.pos;
            let value_escaped = match self.peek() {
                Some(b'"') => self.scan_string()?,
                _ => {
                    self.scan_value(depth + 1)?;
                    false
                }
            };
            if let Some(f) = field {
                let i = f as usize;
                if spans.members[i].is_present() {
                    spans.dup |= 1 << i;
                } else {
                    spans.members[i] = Span {
                        start: vs as u32,
                        end: self.pos as u32,
                    };
                    if value_escaped {
                        spans.escaped |= 1 << i;
                    }
                }
            }
            if !self.member_next(start, spans)? {
                return Ok(());
            }
            field = self.member_key()?;
        }
    }
}
