"""The files panel: files going into ``/in`` or ``/work`` and what the guest left in ``/out``.

Files are added with a button or by dropping them on the panel, into the
place the selector names: ``/in`` (read-only for the program) or ``/work``
(its working directory, writable: a module next to the program, a data
file it updates); the controller reads them and keeps their bytes. After a run the ``/out``
files are listed; selecting one previews it: PNG, JPEG and SVG as
pictures, UTF-8 text as text, anything else as its size with Save.

Names are guest-chosen and may hold bytes that are not UTF-8 (core text
with surrogate escapes, see ``playground.core.guest_text``). Qt silently
drops such characters, so two different names could show (and look up) as
the same one. The panel therefore keeps the real names on the Python side
(list items carry an index, signals carry Python objects) and shows each
name in the escaped form.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum

from PySide6.QtCore import QByteArray, QSize, Qt, Signal
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QImage, QPainter, QPixmap, QResizeEvent
from PySide6.QtWidgets import (
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from playground.app.editor import monospace_font
from playground.app.run_summary import human_size
from playground.core.guest_text import escape

PREVIEW_MAX = QSize(800, 600)
#: Where added files go: (selector text, guest directory name).
PLACES = (("to /in (read-only)", "in"), ("to /work (writable)", "work"))
TEXT_PREVIEW_CHARS = 256 * 1024


class Kind(Enum):
    IMAGE = "image"
    SVG = "svg"
    TEXT = "text"
    BINARY = "binary"


def classify(name: str, data: bytes) -> Kind:
    """How to preview a file, from its magic bytes (and ``.svg`` for SVG)."""
    if data.startswith((b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff")):
        return Kind.IMAGE
    head = data[:1024].lstrip().lower()
    if name.lower().endswith(".svg") or head.startswith(b"<svg") or (head.startswith(b"<?xml") and b"<svg" in head):
        return Kind.SVG
    if b"\x00" in data[:8192]:
        return Kind.BINARY
    try:
        data[:TEXT_PREVIEW_CHARS].decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < TEXT_PREVIEW_CHARS - 4:  # not just a character cut at the preview edge
            return Kind.BINARY
    return Kind.TEXT


def picture_of(kind: Kind, data: bytes) -> QPixmap | None:
    """The file as a pixmap fitting ``PREVIEW_MAX``, or None when it does not decode."""
    if kind is Kind.IMAGE:
        image = QImage.fromData(data)
        if image.isNull():
            return None
        pixmap = QPixmap.fromImage(image)
    else:
        from PySide6.QtSvg import QSvgRenderer

        renderer = QSvgRenderer(QByteArray(data))
        if not renderer.isValid():
            return None
        size = renderer.defaultSize()
        if size.isEmpty():
            size = QSize(256, 256)
        if size.width() > PREVIEW_MAX.width() or size.height() > PREVIEW_MAX.height():
            size = size.scaled(PREVIEW_MAX, Qt.AspectRatioMode.KeepAspectRatio)
        image = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        renderer.render(painter)
        painter.end()
        pixmap = QPixmap.fromImage(image)
    if pixmap.width() > PREVIEW_MAX.width() or pixmap.height() > PREVIEW_MAX.height():
        pixmap = pixmap.scaled(PREVIEW_MAX, Qt.AspectRatioMode.KeepAspectRatio,
                               Qt.TransformationMode.SmoothTransformation)
    return pixmap


class PictureView(QLabel):
    """Shows a pixmap whole: scaled down (never up) to fit, aspect ratio kept."""

    def __init__(self) -> None:
        super().__init__()
        self._original = QPixmap()
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setMinimumSize(64, 64)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Ignored)

    def set_picture(self, pixmap: QPixmap) -> None:
        self._original = pixmap
        self._fit()

    def original(self) -> QPixmap:
        """The picture at its own size (what is shown may be scaled down)."""
        return self._original

    def resizeEvent(self, event: QResizeEvent) -> None:  # Qt override
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        if self._original.isNull():
            self.clear()
            return
        size = self.size()
        if self._original.width() <= size.width() and self._original.height() <= size.height():
            self.setPixmap(self._original)
        else:
            self.setPixmap(self._original.scaled(size, Qt.AspectRatioMode.KeepAspectRatio,
                                                 Qt.TransformationMode.SmoothTransformation))


class FilesPanel(QWidget):
    """Input list (with add/remove and drops) over an /out list with a preview. GUI thread only."""

    addRequested = Signal()
    filesDropped = Signal(list)  # local paths
    # ``object``, not ``list``/``str``: Qt's string conversion would drop the surrogate escapes of a name
    removeRequested = Signal(object)  # list[tuple[str, str]]: (place, name), place "in" or "work"
    saveRequested = Signal(object)  # str: name under /out

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAcceptDrops(True)
        self._out: dict[str, bytes] = {}
        self._out_names: list[str] = []  # row -> real name (the item shows the escaped form)
        self._in_names: list[tuple[str, str]] = []  # row -> (place, real name)

        self.inputs = QListWidget()
        self.inputs.setSelectionMode(QListWidget.SelectionMode.ExtendedSelection)
        add = QPushButton("Add files…")
        add.clicked.connect(self.addRequested)
        self.place = QComboBox()
        for text, place in PLACES:
            self.place.addItem(text, place)
        self.remove_button = QPushButton("Remove")
        self.remove_button.clicked.connect(
            lambda: self.removeRequested.emit([self._in_names[self.inputs.row(i)] for i in self.inputs.selectedItems()])
        )
        buttons = QHBoxLayout()
        buttons.addWidget(add)
        buttons.addWidget(self.place)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        in_box = QGroupBox("Files for the program  (drop files here; it starts in /work)")
        in_layout = QVBoxLayout(in_box)
        in_layout.addWidget(self.inputs)
        in_layout.addLayout(buttons)

        self.outputs = QListWidget()
        self.outputs.currentItemChanged.connect(self._preview_current)
        self.picture = PictureView()
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setFont(monospace_font(10))
        self.info = QLabel()
        self.info.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.info.setWordWrap(True)
        self.preview = QStackedWidget()
        for widget in (self.info, self.picture, self.text):
            self.preview.addWidget(widget)
        self.save_button = QPushButton("Save…")
        self.save_button.setEnabled(False)
        self.save_button.clicked.connect(self._save_current)
        out_box = QGroupBox("/out  (after a run)")
        out_layout = QVBoxLayout(out_box)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.outputs)
        split.addWidget(self.preview)
        split.setSizes([220, 340])
        out_layout.addWidget(split, 1)
        out_layout.addWidget(self.save_button, 0, Qt.AlignmentFlag.AlignRight)

        layout = QVBoxLayout(self)
        layout.addWidget(in_box, 1)
        layout.addWidget(out_box, 3)
        self.show_out_files({})

    # -- inputs -------------------------------------------------------------

    def destination(self) -> str:
        """Where the next added or dropped files go: ``"in"`` or ``"work"``."""
        return str(self.place.currentData())

    def set_input_files(self, sizes: Mapping[str, int], work: Mapping[str, int] | None = None) -> None:
        """List the files for ``/in`` (``sizes``) and for ``/work`` (``work``)."""
        self.inputs.clear()
        work = work or {}
        self._in_names = [("in", name) for name in sorted(sizes)] + [("work", name) for name in sorted(work)]
        for place, name in self._in_names:
            size = (sizes if place == "in" else work)[name]
            self.inputs.addItem(QListWidgetItem(f"/{place}/{escape(name)}  ({human_size(size)})"))

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if paths:
            event.acceptProposedAction()
            self.filesDropped.emit(paths)

    # -- outputs ------------------------------------------------------------

    def show_out_files(self, files: Mapping[str, bytes]) -> None:
        """List a run's /out files and preview the first picture (else the first file)."""
        self._out = dict(files)
        self._out_names = sorted(files)
        self.outputs.clear()
        for name in self._out_names:
            self.outputs.addItem(QListWidgetItem(f"{escape(name)}  ({human_size(len(files[name]))})"))
        if not files:
            self.info.setText("No files in /out yet. Files the guest writes under /out appear here.")
            self.preview.setCurrentWidget(self.info)
            self.save_button.setEnabled(False)
            return
        names = self._out_names
        first = next((n for n in names if classify(n, files[n]) in (Kind.IMAGE, Kind.SVG)), names[0])
        self.outputs.setCurrentRow(names.index(first))

    def current_out(self) -> str | None:
        """The real name (surrogate escapes and all) of the selected /out file."""
        row = self.outputs.currentRow()
        return self._out_names[row] if 0 <= row < len(self._out_names) else None
    def shown_kind(self) -> str:
        """What the preview shows now: ``picture``, ``text`` or ``info`` (for tests)."""
        widget = self.preview.currentWidget()
        if widget is self.text:
            return "text"
        return "info" if widget is self.info else "picture"

    def _preview_current(self) -> None:
        name = self.current_out()
        self.save_button.setEnabled(name is not None)
        if name is None:
            return
        data = self._out[name]
        kind = classify(name, data)
        if kind in (Kind.IMAGE, Kind.SVG):
            pixmap = picture_of(kind, data)
            if pixmap is not None:
                self.picture.set_picture(pixmap)
                self.preview.setCurrentWidget(self.picture)
                return
            self.info.setText(f"{escape(name)}: {human_size(len(data))}, not a picture Qt can decode. "
                              "Save it to look.")
            self.preview.setCurrentWidget(self.info)
        elif kind is Kind.TEXT:
            text = data[:TEXT_PREVIEW_CHARS].decode("utf-8", errors="replace")
            if len(data) > TEXT_PREVIEW_CHARS:
                text += f"\n[… {human_size(len(data) - TEXT_PREVIEW_CHARS)} more; save the file to see all]"
            self.text.setPlainText(text)
            self.preview.setCurrentWidget(self.text)
        else:
            self.info.setText(f"{escape(name)}: {human_size(len(data))} of binary data. Use Save… to keep it.")
            self.preview.setCurrentWidget(self.info)

    def _save_current(self) -> None:
        name = self.current_out()
        if name is not None:
            self.saveRequested.emit(name)
