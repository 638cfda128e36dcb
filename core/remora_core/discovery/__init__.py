"""Discovery: parsing Python with tree-sitter into definitions and references."""

from remora_core.discovery.extract import (
    FileExtraction,
    SkippedFile,
    extract_source,
    extract_tree,
)
from remora_core.discovery.files import FileFilter, SourceSkipped, content_hash

__all__ = [
    "FileExtraction",
    "FileFilter",
    "SkippedFile",
    "SourceSkipped",
    "content_hash",
    "extract_source",
    "extract_tree",
]
