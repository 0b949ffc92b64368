//! [`Action`]: what the user asked for in a frame. The panels return actions instead of
//! changing the app, and `Scope::ui` applies them once everything is drawn, so a panel needs
//! no more of the app than what it shows.

use std::path::PathBuf;

use crate::data::cursors::Which;
use crate::data::layout::SignalRef;
use crate::live::LiveOptions;
use crate::ui::timeline::Step;

/// One thing the user asked for.
#[derive(Debug, Clone)]
pub enum Action {
    /// Open the recording at this path (File > Open Recent, a dropped file).
    Open(PathBuf),
    /// File > Open File: the file dialog, for an `.mcap` file.
    PickFile,
    /// File > Open Folder: the file dialog, for a bag or rosbag2 directory.
    PickFolder,
    /// File > Compare With > File or Folder: the file dialog, for a second recording.
    PickSecond(crate::ui::path_entry::PickKind),
    /// File > Compare With > Path: type the path of a second recording.
    ShowSecondPathEntry,
    /// Open the recording at this path beside the open one.
    OpenSecond(PathBuf),
    /// The topic tree's offset of the second recording: its start this far past the first's, ns.
    SecondOffset(i64),
    /// The topic tree's Close, on the second recording.
    CloseSecond,
    /// File > Connect: show the connect dialog.
    ShowConnectDialog,
    /// The connect dialog's Connect: capture live data.
    Connect(LiveOptions),
    /// File > Save Recording: save the live capture.
    SaveRecording,
    /// The path entry's Save: save the live capture into this new bag directory.
    SaveRecordingTo(PathBuf),
    /// File > Open Path: type the path of a recording.
    ShowPathEntry,
    /// The path entry's Cancel.
    ClosePathEntry,
    /// File > Save Layout: the dialog, then the layout file.
    SaveLayout,
    /// File > Open Layout: the dialog, then the layout file.
    OpenLayout,
    /// The path entry's Save, for a layout.
    SaveLayoutTo(PathBuf),
    /// File > Recent Layouts, or the path entry's Open, for a layout.
    OpenLayoutFrom(PathBuf),
    /// File > Export Signals: the dialog, then the CSV file.
    ExportSignals,
    /// The path entry's Export.
    ExportSignalsTo(PathBuf),
    /// File > Quit, or Ctrl+Q.
    Quit,
    /// Help > Controls, F1 or `?`: show or hide the list of every control.
    ToggleHelp,
    /// Escape: close the help, or else unfocus the focused plot.
    Escape,
    /// File > Live Demo.
    LiveDemo,
    /// File > Demo Recording.
    DemoRecording,
    /// File > Close, or Cancel while loading.
    Close,
    /// View > Reset view, or Home: show the whole recording.
    ResetView,
    /// View > Default layout.
    DefaultLayout,
    /// View > Clear plots.
    ClearPlots,
    /// Dismiss the error bar.
    DismissError,
    /// Space on a recording: play or pause.
    TogglePlaying,
    /// Space on a live capture: follow the newest data, or stop.
    ToggleFollowing,
    /// A key that moves the view of a live capture: stop following.
    StopFollowing,
    /// Move the playhead to the next or previous message.
    Step(Step),
    /// `+`: halve the visible window around the playhead.
    ZoomIn,
    /// `-`: double the visible window around the playhead.
    ZoomOut,
    /// A field clicked in the tree: add it to the focused plot (a new plot when none is).
    AddSignal(SignalRef),
    /// A click in a plot: move the playhead here (ns).
    Seek(u64),
    /// Shift + click or drag in a plot: put cursor `.0` at `.1` (ns).
    PlaceCursor(Which, u64),
    /// `A` or `B`: put that cursor at the playhead.
    CursorAtPlayhead(Which),
    /// `X`, or the cursor panel's Clear: remove both cursors.
    ClearCursors,
    /// A click in plot `.0`: tree clicks add to it from now on.
    Focus(usize),
    /// A field dropped onto a plot (`None`: onto the drop zone, a new plot).
    DropSignal {
        /// The plot.
        plot: Option<usize>,
        /// The field.
        signal: SignalRef,
    },
    /// Remove a signal from a plot.
    RemoveSignal {
        /// The plot.
        plot: usize,
        /// The signal's index within it.
        signal: usize,
    },
    /// Remove a plot.
    RemovePlot(usize),
    /// Plot `plot`'s signal `signal` becomes its x axis: an XY plot of the others against it.
    MakeXy {
        /// The plot.
        plot: usize,
        /// The signal's index within it.
        signal: usize,
    },
    /// What XY plot `plot`'s legend asked for.
    Xy {
        /// The plot.
        plot: usize,
        /// What.
        xy: crate::ui::xy_plot::XyAction,
    },
    /// "New derived signal..." (of this field: "Derive a signal from this..."): the editor.
    NewDerived(Option<SignalRef>),
    /// A derived signal's "Edit...": the editor.
    EditDerived(String),
    /// A derived signal's "Remove".
    RemoveDerived(String),
    /// The editor's Add or Save.
    DefineDerived {
        /// The definition it replaces (by name), when editing.
        replacing: Option<String>,
        /// The definition.
        spec: crate::data::derived::DerivedSpec,
    },
    /// The log view shows topic `.0`: have a worker read its lines.
    ShowLog(usize),
    /// The inspector shows `topic`'s message logged at `t_ns`: have its worker decode it.
    Inspect {
        /// Topic index.
        topic: usize,
        /// The message's log time.
        t_ns: u64,
    },
}
