"""Pick the text encoding of a CSV's bytes: byte-order mark, UTF-8 or Windows-1252, refusing binaries and workbooks."""

from __future__ import annotations

import codecs
import re
from pathlib import Path

from bot.errors import CsvError

RESAVE = "open it in your spreadsheet and save it again as 'CSV UTF-8'"
_CHUNK = 1 << 20  # bytes per step of the UTF-8 pre-scan
_EXCEL_MAGIC = (b"PK\x03\x04", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1")  # xlsx (zip), xls (OLE2)
_STRAY = re.compile("[\udc80-\udcff]")  # a byte that is not UTF-8, as the surrogateescape handler decodes it


def detect_encoding(path: Path, head: bytes) -> str:
    """Pick the codec from the byte-order mark, else UTF-8 if the whole file decodes, else cp1252 when bytes that are
    not UTF-8 outnumber the UTF-8 characters; a UTF-8 file with stray bytes is refused (read as cp1252, its good rows
    would be garbled)."""
    if head.startswith(_EXCEL_MAGIC):
        raise CsvError(f"{path} looks like an Excel workbook, not a CSV; {RESAVE}")
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        problem = _decode_problem(path, "utf-16")
        if problem is not None:
            raise CsvError(f"{path} starts with a UTF-16 marker but is not valid UTF-16 ({problem}); {RESAVE}")
        return "utf-16"
    if b"\x00" in head:
        raise CsvError(f"{path} is not a text CSV (it contains binary data); {RESAVE}")
    marked = head.startswith(codecs.BOM_UTF8)
    first, strays, multibyte = _utf8_scan(path, len(codecs.BOM_UTF8) if marked else 0)
    if first is None:
        return "utf-8-sig" if marked else "utf-8"
    if marked or multibyte >= strays:  # UTF-8 text with a byte pasted in; cp1252 makes a pair UTF-8 only by chance
        line, byte = first
        more = f", and {strays - 1} more bytes like it" if strays > 1 else ""
        raise CsvError(f"{path}: line {line} has byte 0x{byte:02x}, which is not UTF-8 (the rest of the file is "
                       f"UTF-8{more}); {RESAVE}, or retype the character at that place")
    problem = _decode_problem(path, "cp1252")
    if problem is None:
        return "cp1252"
    raise CsvError(f"{path} is neither UTF-8 nor Windows-1252 text ({problem}); {RESAVE}")


def _utf8_scan(path: Path, skip: int) -> tuple[tuple[int, int] | None, int, int]:
    """In chunks (constant memory): (line, byte) of the first byte that is not UTF-8, if any, how many such bytes
    there are, and how many characters are UTF-8 encoded in several bytes."""
    decoder = codecs.getincrementaldecoder("utf-8")("surrogateescape")
    first: tuple[int, int] | None = None
    strays = multibyte = newlines = 0
    with path.open("rb") as f:
        f.seek(skip)
        while True:
            chunk = f.read(_CHUNK)
            text = decoder.decode(chunk, final=not chunk)
            if not text.isascii():
                found = _STRAY.findall(text)
                if found and first is None:
                    at = text.index(found[0])
                    first = (newlines + text.count("\n", 0, at) + 1, ord(found[0]) - 0xDC00)
                strays += len(found)
                multibyte += len(text) - len(text.encode("ascii", "ignore")) - len(found)
            if not chunk:
                return first, strays, multibyte
            newlines += text.count("\n")


def _decode_problem(path: Path, encoding: str) -> str | None:
    """Strictly decode the whole file in chunks (constant memory); describe the first bad byte, if any."""
    decoder = codecs.getincrementaldecoder(encoding)("strict")
    newlines = 0
    with path.open("rb") as f:
        while True:
            chunk = f.read(_CHUNK)
            pending = len(decoder.getstate()[0])  # bytes of a character split across chunks
            try:
                decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as err:
                bad = f"byte 0x{err.object[err.start]:02x}"
                if encoding == "utf-16":
                    return bad
                line = newlines + chunk[: max(0, err.start - pending)].count(b"\n") + 1
                return f"{bad} on line {line}"
            if not chunk:
                return None
            newlines += chunk.count(b"\n")
