"""The scripts' one way to read an input file, with the simulator's rules (common/file-reader,
common/json-reader): only regular files (a directory, /dev/zero or a FIFO is refused before a
byte is read), within a size bound, and JSON without duplicate keys or runaway nesting."""
import json
import os
import stat

from .stats import InputProblem

CONFIG_MAX_BYTES = 256 << 20  # scenarios, sweep files
DATA_MAX_BYTES = 4 << 30  # FCT tables, measurement CSVs


def _kind(mode):
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode):
        return "a character device, not a regular file"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe), not a regular file"
    return "not a regular file"


def read_bytes(path, what, max_bytes=CONFIG_MAX_BYTES):
    """The bytes of `path`, a regular file of at most `max_bytes`; InputProblem otherwise."""
    try:
        # O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        raise InputProblem(path, "", "a readable " + what, e.strerror or str(e))
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise InputProblem(path, "", "a readable " + what, _kind(st.st_mode))
    with os.fdopen(fd, "rb") as f:
        if st.st_size > max_bytes:
            raise InputProblem(path, "", "a %s of at most %d bytes" % (what, max_bytes),
                               "%d bytes" % st.st_size)
        # In chunks: read(max_bytes + 1) would allocate the whole bound up front.
        chunks, size = [], 0
        while size <= max_bytes:
            chunk = f.read(1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        data = b"".join(chunks)
    if len(data) > max_bytes:
        raise InputProblem(path, "", "a %s of at most %d bytes" % (what, max_bytes),
                           "more (it grew while read)")
    return data


def read_text(path, what, max_bytes=CONFIG_MAX_BYTES):
    """read_bytes decoded as UTF-8."""
    try:
        return read_bytes(path, what, max_bytes).decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputProblem(path, "", "UTF-8 text", "a byte that is not (%s)" % e.reason)


def _no_duplicates(pairs):
    seen = {}
    for k, v in pairs:
        if k in seen:
            raise ValueError("key %r twice in one object" % k)
        seen[k] = v
    return seen


def parse_json(text, path):
    """JSON with the simulator's rules: a key twice in one object and nesting too deep for the
    parser are bad input, not a silently kept last value or a RecursionError."""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates)
    except ValueError as e:
        raise InputProblem(path, "", "valid JSON", str(e))
    except RecursionError:
        raise InputProblem(path, "", "JSON nested at most a few hundred levels deep", "deeper nesting")


def load_json(path, what, max_bytes=CONFIG_MAX_BYTES):
    """read_text then parse_json."""
    return parse_json(read_text(path, what, max_bytes), path)
