"""``InputLine``: under the output pane, what the user types goes to the running program.

Two ways to give a program input, as in a terminal:

* typing while it runs: a line editor; Enter sends the line (with its
  newline) to the run's keyboard (``core.InputStream``), and the line is
  echoed into the output pane, where a terminal would show it; Ctrl+D (or
  "End input") is end of input. A line typed before the program asks is
  kept for it, like typing ahead in a terminal. When the program waits
  for input the editor says so and takes the focus (once per run).
* a stdin text ("stdin…"): for a program that reads a whole file
  (``sys.stdin.read()``, ``cat``). When it is not empty the program gets
  exactly that text and then end of file, and the line editor stays off
  for that run; when it is empty, stdin is the keyboard.

GUI thread only. Nothing here blocks: ``InputStream.write``/``close`` take
a lock for a moment and return; whether the program waits is polled every
``POLL_MS``.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from playground.app.output_buffer import OutputBuffer
from playground.core import InputStream, Stream

#: How often the line checks whether the program waits for input.
POLL_MS = 100
IDLE_HINT = "Input for the program goes here while it runs (Enter sends a line, Ctrl+D ends input)"
RUNNING_HINT = "Type a line for the program, Enter to send (Ctrl+D: end of input)"
STDIN_HINT = "Runs read the stdin text (stdin…); empty it to type input while a program runs"
WAITING_HINT = "The program is waiting for input: type a line, Enter to send (Ctrl+D: end of input)"


class _LineEdit(QLineEdit):
    """A line editor that turns Ctrl+D into ``end_of_input`` (as a terminal does)."""

    end_of_input = Signal()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_D and event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.end_of_input.emit()
            return
        super().keyPressEvent(event)


class InputLine(QWidget):
    """The program's keyboard and its stdin text. ``start_run``/``end_run`` bracket each run."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.line = _LineEdit()
        self.line.setObjectName("programInput")
        self.line.setPlaceholderText(IDLE_HINT)
        self.line.setEnabled(False)
        self.send_button = QPushButton("Send")
        self.send_button.setObjectName("sendInput")
        self.send_button.setToolTip("Send the line to the program (Enter)")
        self.end_button = QPushButton("End input")
        self.end_button.setObjectName("endInput")
        self.end_button.setToolTip("End of input: the program reads end of file (Ctrl+D)")
        self.stdin_button = QPushButton("stdin…")
        self.stdin_button.setObjectName("stdinToggle")
        self.stdin_button.setCheckable(True)
        self.stdin_button.setToolTip("Text given to the program as its whole stdin (then end of file)")
        self.stdin_text = QPlainTextEdit()
        self.stdin_text.setObjectName("stdinText")
        self.stdin_text.setPlaceholderText(
            "stdin for the next run: the program reads this text, then end of file. Leave it empty to type "
            "input while the program runs."
        )
        self.stdin_text.setMaximumHeight(90)
        self.status = QLabel("")
        self.status.setObjectName("inputStatus")

        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(QLabel("Input:"))
        row.addWidget(self.line, 1)
        row.addWidget(self.send_button)
        row.addWidget(self.end_button)
        row.addWidget(self.stdin_button)
        self.stdin_row = QWidget()
        stdin_layout = QHBoxLayout(self.stdin_row)
        stdin_layout.setContentsMargins(0, 0, 0, 0)
        stdin_label = QLabel("stdin:")
        stdin_label.setAlignment(Qt.AlignmentFlag.AlignTop)
        stdin_layout.addWidget(stdin_label)
        stdin_layout.addWidget(self.stdin_text, 1)
        self.stdin_row.setVisible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 0)
        layout.setSpacing(2)
        layout.addWidget(self.stdin_row)
        layout.addLayout(row)
        layout.addWidget(self.status)
        self.status.setVisible(False)

        self._keyboard: InputStream | None = None
        self._buffer: OutputBuffer | None = None
        self._focused = False
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._poll)
        self.line.returnPressed.connect(self.send)
        self.line.end_of_input.connect(self.end_input)
        self.send_button.clicked.connect(self.send)
        self.end_button.clicked.connect(self.end_input)
        self.stdin_button.toggled.connect(self.stdin_row.setVisible)
        self.stdin_text.textChanged.connect(lambda: self._set_live(self._keyboard is not None))
        self._set_live(False)

    # -- a run's input ----------------------------------------------------------------------

    def start_run(self, buffer: OutputBuffer) -> tuple[bytes | None, InputStream | None]:
        """A run starts: (its ``Spec.stdin``, its keyboard). Exactly one of them is set.

        ``buffer`` is the run's output, where sent lines are echoed.
        """
        self.end_run()
        text = self.stdin_text.toPlainText()
        if text:
            self._say(f"stdin: the {len(text.encode())} bytes of the stdin text, then end of file")
            return text.encode("utf-8"), None
        self._keyboard = InputStream()
        self._buffer = buffer
        self._focused = False
        self._say("")
        self._set_live(True)
        self._timer.start()
        return None, self._keyboard

    def end_run(self) -> None:
        """The run ended (or never started): typing goes nowhere until the next run."""
        self._timer.stop()
        if self._keyboard is not None:
            self._keyboard.close()
        self._keyboard = None
        self._buffer = None
        self._set_live(False)

    @property
    def keyboard(self) -> InputStream | None:
        """The running program's keyboard (None between runs or with a stdin text)."""
        return self._keyboard

    # -- the user's actions -----------------------------------------------------------------

    def send(self) -> None:
        """Send the typed line (and its newline) to the program and echo it in the output."""
        keyboard = self._keyboard
        if keyboard is None or keyboard.closed:
            return
        text = self.line.text() + "\n"
        data = text.encode("utf-8")
        keyboard.write(data)
        if self._buffer is not None:
            self._buffer.write(Stream.STDOUT, data)  # the echo a terminal would show
        self.line.clear()

    def end_input(self) -> None:
        """Ctrl+D: what is typed so far is sent without a newline, then end of file."""
        keyboard = self._keyboard
        if keyboard is None or keyboard.closed:
            return
        if self.line.text():
            data = self.line.text().encode("utf-8")
            keyboard.write(data)
            if self._buffer is not None:
                self._buffer.write(Stream.STDOUT, data)
            self.line.clear()
        keyboard.close()
        self._say("end of input sent")
        self._set_live(False)

    # -- display ----------------------------------------------------------------------------

    def _poll(self) -> None:
        keyboard = self._keyboard
        if keyboard is None or keyboard.closed:
            return
        waiting = keyboard.waiting
        self.line.setPlaceholderText(WAITING_HINT if waiting else RUNNING_HINT)
        self.line.setProperty("waiting", waiting)
        if waiting and not self._focused:
            self._focused = True
            window = self.window()
            if window is not None and window.isActiveWindow():
                self.line.setFocus(Qt.FocusReason.OtherFocusReason)

    def _set_live(self, live: bool) -> None:
        live = live and self._keyboard is not None and not self._keyboard.closed
        self.line.setEnabled(live)
        self.send_button.setEnabled(live)
        self.end_button.setEnabled(live)
        if live:
            self.line.setPlaceholderText(RUNNING_HINT)
        elif self.stdin_text.toPlainText():
            self.line.setPlaceholderText(STDIN_HINT)
        else:
            self.line.setPlaceholderText(IDLE_HINT)

    def _say(self, text: str) -> None:
        self.status.setText(text)
        self.status.setVisible(bool(text))


def with_input_line(output: QWidget, line: InputLine) -> QWidget:
    """``output`` with ``line`` under it, as one widget (the window's output area)."""
    box = QWidget()
    box.setObjectName("outputArea")
    layout = QVBoxLayout(box)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.setSpacing(0)
    layout.addWidget(output, 1)
    layout.addWidget(line)
    return box
