#!/usr/bin/env python3
"""Packs release binaries that are already built into a binary wheel for PyPI, so that
`uvx yazses mcp-server` and `pipx install yazses` install yazses without a Rust toolchain.

    pack.py DIST_DIR PLATFORM_TAG OUT_DIR

DIST_DIR is an unpacked release folder (dist/yazses-x86_64-linux, ...): every executable in
it goes into the wheel's scripts (`yazses`, and the AVX2 build `yazses-x86-64-v3` it hands
over to, which pip installs beside it). The wheel is `py3-none-PLATFORM_TAG`: no Python code,
one wheel per system and CPU, the layout maturin gives a `bin` crate (ruff, uv).

The version, licence and repository come from the workspace's Cargo.toml, the long description from README.md, whose
`mcp-name:` line is the MCP registry's proof that this PyPI package is the server's.
"""

import base64
import hashlib
import re
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NAME = "yazses"
SUMMARY = "Local speech to text over MCP: transcribe audio files; ask the user a question out loud."


def workspace(key: str) -> str:
    text = (ROOT / "Cargo.toml").read_text()
    return re.search(rf'^{key}\s*=\s*"([^"]+)"', text, re.M).group(1)


def metadata(ver: str) -> str:
    head = [
        "Metadata-Version: 2.1",
        f"Name: {NAME}",
        f"Version: {ver}",
        f"Summary: {SUMMARY}",
        f"License: {workspace('license')}",
        f"Project-URL: Source, {workspace('repository')}",
        "Keywords: speech-to-text,whisper,mcp,dictation",
        "Classifier: Environment :: Console",
        "Classifier: Topic :: Multimedia :: Sound/Audio :: Speech",
        "Description-Content-Type: text/markdown",
    ]
    return "\n".join(head) + "\n\n" + (ROOT / "README.md").read_text()


def record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def executables(dist: Path) -> list[Path]:
    found = [
        p
        for p in sorted(dist.iterdir())
        if p.is_file() and (p.suffix == ".exe" or (p.suffix == "" and p.stat().st_mode & 0o111))
    ]
    if not any(p.stem == NAME for p in found):
        sys.exit(f"{dist} holds no {NAME} executable")
    return found


def pack(dist: Path, tag: str, out: Path) -> Path:
    ver = workspace("version")
    data_dir, info_dir = f"{NAME}-{ver}.data", f"{NAME}-{ver}.dist-info"
    wheel = out / f"{NAME}-{ver}-py3-none-{tag}.whl"
    out.mkdir(parents=True, exist_ok=True)
    files = [(f"{data_dir}/scripts/{p.name}", p.read_bytes(), 0o755) for p in executables(dist)]
    files += [
        (f"{info_dir}/METADATA", metadata(ver).encode(), 0o644),
        (
            f"{info_dir}/WHEEL",
            "\n".join(
                [
                    "Wheel-Version: 1.0",
                    "Generator: yazses packaging/wheels/pack.py",
                    "Root-Is-Purelib: false",
                    f"Tag: py3-none-{tag}",
                    "",
                ]
            ).encode(),
            0o644,
        ),
    ]
    record = [record_line(name, data) for name, data, _ in files]
    record.append(f"{info_dir}/RECORD,,")
    files.append((f"{info_dir}/RECORD", ("\n".join(record) + "\n").encode(), 0o644))
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data, mode in files:
            # A fixed time: the same binaries make the same wheel.
            entry = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            entry.external_attr = (0o100000 | mode) << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(entry, data)
    return wheel


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    wheel = pack(Path(argv[1]), argv[2], Path(argv[3]))
    print(wheel)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
