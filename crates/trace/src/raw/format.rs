//! The layout files tracefs publishes: an event's `format` (its id and each field's offset
//! and size) and `header_page` (where a ring-buffer page keeps its commit word and data).

/// Why a layout file could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    /// The file has no `ID:` line.
    #[error("no event id in the format file")]
    NoId,
    /// A field the decoder needs is not in the file, or has an unexpected size.
    #[error("field {0} missing or of an unexpected size")]
    Field(&'static str),
}

/// Where one field of an event's record is, bytes from the record's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// Offset in the record.
    pub offset: usize,
    /// Size in bytes.
    pub size: usize,
}

/// An event's `format` file: its id and fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Format {
    /// The event's id (`common_type` of its records).
    pub id: u16,
    fields: Vec<(String, Field)>,
}

impl Format {
    /// Reads a `format` file's text.
    pub fn parse(text: &str) -> Result<Format, FormatError> {
        let id = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("ID:"))
            .and_then(|v| v.trim().parse().ok())
            .ok_or(FormatError::NoId)?;
        let fields = text.lines().filter_map(field).collect();
        Ok(Format { id, fields })
    }

    /// Field `name`, which must be `size` bytes (any size with `None`).
    pub fn field(&self, name: &'static str, size: Option<usize>) -> Result<Field, FormatError> {
        self.fields
            .iter()
            .find(|(n, f)| n == name && size.is_none_or(|s| s == f.size))
            .map(|(_, f)| *f)
            .ok_or(FormatError::Field(name))
    }
}

/// `\tfield:__u8 saddr[28];\toffset:8;\tsize:28;\tsigned:0;` → (`saddr`, 8, 28).
fn field(line: &str) -> Option<(String, Field)> {
    let mut parts = line.trim().split(';').map(str::trim);
    let decl = parts.next()?.strip_prefix("field:")?;
    let name = decl.split_whitespace().next_back()?;
    let name = name.split('[').next()?.to_string();
    let mut value = |key: &str| -> Option<usize> { parts.next()?.strip_prefix(key)?.parse().ok() };
    let offset = value("offset:")?;
    let size = value("size:")?;
    Some((name, Field { offset, size }))
}

/// Where a ring-buffer page keeps its parts (`events/header_page`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageLayout {
    /// The page's time stamp (8 bytes).
    pub timestamp: Field,
    /// The commit word: bytes of data, with the missed-events flags in its high bits.
    pub commit: Field,
    /// Where the events start and how much room they have.
    pub data: Field,
}

impl PageLayout {
    /// Reads `header_page`'s text.
    pub fn parse(text: &str) -> Result<PageLayout, FormatError> {
        let f = Format { id: 0, fields: text.lines().filter_map(field).collect() };
        let layout = PageLayout {
            timestamp: f.field("timestamp", Some(8))?,
            commit: f
                .field("commit", None)
                .ok()
                .filter(|c| c.size == 4 || c.size == 8)
                .ok_or(FormatError::Field("commit"))?,
            data: f.field("data", None)?,
        };
        Ok(layout)
    }

    /// Bytes of a whole page: what one read of `trace_pipe_raw` returns at most.
    pub fn page_bytes(&self) -> usize {
        self.data.offset.saturating_add(self.data.size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RETRANSMIT: &str = "name: tcp_retransmit_skb\nID: 2281\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:__u16 sport;\toffset:28;\tsize:2;\tsigned:0;\n\tfield:__u8 saddr_v6[16];\toffset:42;\tsize:16;\tsigned:0;\n\nprint fmt: \"x\"\n";

    #[test]
    fn reads_ids_fields_and_the_page_header() {
        let f = Format::parse(RETRANSMIT).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(f.id, 2281);
        assert_eq!(f.field("sport", Some(2)), Ok(Field { offset: 28, size: 2 }));
        assert_eq!(f.field("saddr_v6", None), Ok(Field { offset: 42, size: 16 }));
        assert_eq!(f.field("sport", Some(4)), Err(FormatError::Field("sport")));
        assert_eq!(Format::parse("name: x\n"), Err(FormatError::NoId));
        let page = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
        let p = PageLayout::parse(page).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((p.commit.offset, p.commit.size, p.data.offset, p.page_bytes()), (8, 8, 16, 4096));
        assert!(PageLayout::parse("").is_err());
    }
}
