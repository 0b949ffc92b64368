//! [`Scope`]: the whole app's state, its background work and its frame.
//!
//! As eframe splits an app, [`Scope::logic`] does the work that must go on whether or not the
//! window is shown (eframe calls it before every frame and also while the window is hidden,
//! whenever a worker asks for a repaint): starting what was asked for, taking in what the
//! opening jobs, the loader, the live capture, the inspector and a save report, following a
//! live capture, playing back. [`Scope::ui`] only draws the panels and applies what the user
//! asked for in them ([`Action`]s). Both run in eframe and in an egui_kittest harness alike.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicI32;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender, bounded};

use crate::app::commands::{Command, Repaint};
use crate::app::open::{OpenEvent, OpenStatus, PickKind, PickPath};
use crate::app::save_job::{SaveJob, SaveState};
use crate::app::screenshot::ScreenshotJob;
use crate::app::view::Zoom;
use crate::data::cursors::{Cursors, Which};
use crate::data::derived::DERIVED_TOPIC;
use crate::data::inspector::Inspector;
use crate::data::layout::{Layout, Persisted, SignalRef};
use crate::data::log_lines::LogLines;
use crate::data::range_stats::RangeIndexes;
use crate::data::signal_export::ExportProgress;
use crate::data::source::DataSource;
use crate::error::Error;
use crate::live::LiveOptions;
use crate::recording::Recording;
use crate::ui::action::Action;
use crate::ui::connect_dialog::{ConnectForm, connect_dialog_ui};
use crate::ui::derived_dialog::{Define, DerivedForm, derived_dialog_ui};
use crate::ui::error_bar::error_bar_ui;
use crate::ui::help::help_ui;
use crate::ui::input::input_actions;
use crate::ui::log_view::LogView;
use crate::ui::menu::{MenuState, menu_bar_ui};
use crate::ui::path_entry::{PathEntry, path_entry_ui};
use crate::ui::plots::{PlotView, plot_stack_ui};
use crate::ui::side_panel::{RightPanel, SideState, side_panel_ui};
use crate::ui::status_bar::status_bar_ui;
use crate::ui::timeline::{Playback, advance, timeline_ui};
use crate::ui::tree::topic_tree_ui;
use crate::ui::welcome::welcome_ui;
use crate::ui::xy_plot::XyAction;

mod commands;
mod export;
mod follow;
mod icon;
mod layouts;
pub mod open;
pub mod save_job;
pub mod screenshot;
mod view;

pub use icon::icon;

/// How many recent files are remembered.
const RECENT_MAX: usize = 10;

/// How long one `logic` call may spend taking in decoded columns.
const POLL_BUDGET: Duration = Duration::from_millis(8);

/// The app.
pub struct Scope {
    pick: PickPath,
    commands: Vec<Command>,
    open_tx: Sender<OpenEvent>,
    open_rx: Receiver<OpenEvent>,
    opening: usize,
    /// What the opening jobs say they are doing (decompressing a part).
    open_status: Arc<OpenStatus>,
    recording: Option<Recording>,
    inspector: Option<Inspector>,
    /// The last error, shown until dismissed.
    pub error: Option<Error>,
    /// Recent files and layout (saved by eframe).
    pub persisted: Persisted,
    view: PlotView,
    /// Playhead, play/pause, speed.
    pub playback: Playback,
    filter: String,
    focused_plot: Option<usize>,
    /// The panel on the right.
    pub right: RightPanel,
    screenshot: Option<ScreenshotJob>,
    /// The next recording gets the default layout unless the saved one applies to it.
    default_layout: bool,
    /// The layout has been fitted to the open recording (see `settle_layout`).
    layout_settled: bool,
    /// The plots are to show the open recording's whole range once drawn.
    reset_view: bool,
    /// Live view follows the newest data (off: paused, free to scrub).
    pub follow: bool,
    /// The window following asked the plots for this frame (`None`: not following at the
    /// start of this frame).
    follow_range: Option<(f64, f64)>,
    /// File > Connect.
    pub connect_form: ConnectForm,
    /// The derived-signal editor.
    pub derived_form: DerivedForm,
    save: Option<SaveJob>,
    /// The log view's topic, filter and lines.
    pub log_view: LogView,
    /// The help overlay (every control) is shown.
    pub help_open: bool,
    /// Where a path is typed when the file dialog gave none back.
    pub path_entry: Option<PathEntry>,
    /// The last thing that finished (e.g. a save), shown in the status bar.
    pub notice: Option<String>,
    /// Cursors A and B, shared by every plot.
    pub cursors: Cursors,
    /// Range summaries of the plotted signals, for the cursors' statistics.
    range_indexes: RangeIndexes<SignalRef>,
    /// A layout file read, to be checked against the recording once it is loaded.
    pending_layout: Option<layouts::PendingLayout>,
    /// How far the running export has got (`None`: none runs).
    export_progress: Option<Arc<ExportProgress>>,
    /// A second recording opened before the first one was (`--compare`).
    pending_second: Option<Arc<dyn DataSource>>,
}

impl std::fmt::Debug for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope")
            .field("recording", &self.recording)
            .field("error", &self.error)
            .finish()
    }
}

impl Scope {
    /// A scope with nothing open; `pick` is the file dialog (see [`open::native_dialog`]).
    pub fn new(pick: PickPath) -> Self {
        let (open_tx, open_rx) = bounded(8);
        Self {
            pick,
            commands: Vec::new(),
            open_tx,
            open_rx,
            opening: 0,
            open_status: Arc::default(),
            recording: None,
            inspector: None,
            error: None,
            persisted: Persisted::default(),
            view: PlotView::default(),
            playback: Playback::default(),
            filter: String::new(),
            focused_plot: None,
            right: RightPanel::Health,
            screenshot: None,
            default_layout: false,
            layout_settled: false,
            reset_view: false,
            follow: true,
            follow_range: None,
            connect_form: ConnectForm::default(),
            derived_form: DerivedForm::default(),
            save: None,
            path_entry: None,
            help_open: false,
            log_view: LogView::default(),
            notice: None,
            cursors: Cursors::default(),
            range_indexes: RangeIndexes::default(),
            pending_layout: None,
            export_progress: None,
            pending_second: None,
        }
    }

    /// Opens `path` (read off the UI thread, starting with the next `logic`).
    pub fn open(&mut self, path: PathBuf) {
        self.commands.push(Command::Open(path));
    }

    /// Opens `path` beside the open recording, to compare: its topics named `B:/topic`, its
    /// start aligned with the open one's.
    pub fn open_second(&mut self, path: PathBuf) {
        self.commands.push(Command::OpenSecond(path));
    }

    /// Opens `path` as `scope PATH` does: with the default layout unless the saved layout
    /// applies to it.
    pub fn open_with_default_layout(&mut self, path: PathBuf) {
        self.default_layout = true;
        self.open(path);
    }

    /// Starts the live demo: a simulated vehicle on an in-process zenoh session.
    pub fn open_demo(&mut self) {
        self.start_live(LiveOptions::demo());
    }

    /// Writes and opens the built-in demo recording (a torn part, drops, a silent topic).
    pub fn open_demo_recording(&mut self) {
        self.default_layout = true;
        self.commands.push(Command::DemoRecording);
    }

    /// Starts capturing live data (closing what was open).
    pub fn start_live(&mut self, options: LiveOptions) {
        self.default_layout = true;
        self.commands.push(Command::Live(options));
    }

    /// Saves the live capture into the bag directory the injected dialog picks.
    pub fn save_recording(&mut self) {
        if self.is_saving() {
            return;
        }
        if !self.is_live() {
            self.error = Some(Error::NothingCaptured);
            return;
        }
        match SaveJob::pick(&self.pick) {
            Ok(job) => self.save = Some(job),
            Err(e) => self.error = Some(e),
        }
    }

    /// Saves the live capture into `dir` on a background thread.
    pub fn save_recording_to(&mut self, dir: PathBuf) {
        let Some(shared) = self
            .recording
            .as_ref()
            .and_then(Recording::capture)
            .map(|c| Arc::clone(c.shared()))
        else {
            self.error = Some(Error::NothingCaptured);
            return;
        };
        match SaveJob::write(shared, dir) {
            Ok(job) => {
                self.notice = None;
                self.save = Some(job);
            }
            Err(e) => self.error = Some(e),
        }
    }

    /// True while a save is running (its dialog included).
    pub fn is_saving(&self) -> bool {
        self.save.is_some()
    }

    /// Shows the file dialog as File > Open would.
    pub fn pick(&mut self, kind: PickKind) {
        self.commands.push(Command::Pick(kind));
    }

    /// Renders one frame once loaded with a default layout, writes it to `out` and closes;
    /// the exit code lands in `exit_code` (0 written, 1 failed).
    pub fn screenshot_to(&mut self, out: PathBuf, exit_code: Arc<AtomicI32>) {
        self.default_layout = true;
        self.screenshot = Some(ScreenshotJob::new(out, exit_code));
    }

    /// The open recording.
    pub fn recording(&self) -> Option<&Recording> {
        self.recording.as_ref()
    }

    /// True while a recording is being opened (dialog, summaries or demo).
    pub fn is_opening(&self) -> bool {
        self.opening > 0 || !self.commands.is_empty()
    }

    /// While a recording is being opened, what to say: "Opening...", and what the job is
    /// doing when it says (decompressing a part stored compressed whole, how far).
    fn opening_text(&self) -> Option<String> {
        self.is_opening().then(|| match self.open_status.get() {
            Some(doing) => format!("Opening... {doing}"),
            None => "Opening...".to_owned(),
        })
    }

    /// The plot layout.
    pub fn layout(&self) -> &Layout {
        &self.persisted.layout
    }

    /// The plot layout, to change.
    pub fn layout_mut(&mut self) -> &mut Layout {
        &mut self.persisted.layout
    }

    /// Points handed to egui_plot in the last frame.
    pub fn points_last_frame(&self) -> usize {
        self.view.points_last_frame
    }

    /// Each plot's frame (the area inside its axes) in the last frame, top to bottom.
    pub fn plot_frames(&self) -> &[egui::Rect] {
        &self.view.frames
    }

    /// Closes the recording (cancels loading).
    pub fn close(&mut self) {
        self.recording = None;
        self.inspector = None;
        self.view.clear();
        self.log_view.clear();
        self.playback = Playback::default();
        self.cursors.clear();
        self.range_indexes.clear();
    }

    /// Puts cursor `which` at `t_ns` and shows the Cursors tab, where its readings are.
    fn place_cursor(&mut self, which: Which, t_ns: u64) {
        self.cursors.place(which, t_ns);
        self.right = RightPanel::Cursors;
    }

    fn is_live(&self) -> bool {
        self.recording
            .as_ref()
            .is_some_and(|r| r.capture().is_some())
    }

    /// The work that goes on whether or not the window is shown: eframe calls this before
    /// every frame, and while the window is hidden whenever a worker asks for a repaint. It
    /// never draws.
    pub fn logic(&mut self, ctx: &egui::Context) {
        let repaint: Repaint = {
            let ctx = ctx.clone();
            Arc::new(move || ctx.request_repaint())
        };
        self.run_commands(&repaint);
        self.poll_save();
        self.take_opened(&repaint);
        self.poll_recording(ctx);
        self.reset_view_once_plotted();
        if let Some(inspector) = &mut self.inspector {
            inspector.poll();
        }
        self.poll_log(ctx);
        self.follow_newest(ctx);
        self.play(ctx);
    }

    /// One frame: the panels, then what the user asked for in them.
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        // Keys act before anything is drawn, so a zoom shows in this very frame.
        let keys = input_actions(&ctx, self.is_live(), self.recording.is_some());
        self.apply(&ctx, keys);
        let mut actions = Vec::new();
        let opening = self.opening_text();
        let menu = MenuState {
            recording: self.recording.as_ref(),
            recent: &self.persisted.recent,
            recent_layouts: &self.persisted.recent_layouts,
            exporting: self
                .export_progress
                .as_deref()
                .map(ExportProgress::fraction),
            saving: self.is_saving(),
            opening: opening.as_deref(),
        };
        egui::Panel::top("scope-menu").show(ui, |ui| menu_bar_ui(ui, menu, &mut actions));
        if let Some(error) = &self.error {
            egui::Panel::top("scope-error").show(ui, |ui| error_bar_ui(ui, error, &mut actions));
        }
        if let Some(options) = connect_dialog_ui(&ctx, &mut self.connect_form) {
            actions.push(Action::Connect(options));
        }
        if let Some(Define { replacing, spec }) =
            derived_dialog_ui(&ctx, &mut self.derived_form, &self.persisted.layout.derived)
        {
            actions.push(Action::DefineDerived { replacing, spec });
        }
        help_ui(&ctx, &mut self.help_open);
        if let Some(entry) = &mut self.path_entry {
            let kind = entry.kind;
            actions.extend(path_entry_ui(&ctx, entry).into_action(kind));
        }
        self.status_bar_ui(ui);
        if self.recording.is_some() {
            self.recording_ui(ui, &mut actions);
        } else {
            egui::CentralPanel::default().show(ui, |ui| welcome_ui(ui, opening.as_deref()));
        }
        self.apply(&ctx, actions);
        self.stop_following_on_user_move(&ctx);
        self.screenshot_after_frame(&ctx);
    }

    /// The live capture's status bar, when one is open.
    fn status_bar_ui(&mut self, ui: &mut egui::Ui) {
        let Some(rec) = self.recording.as_ref().filter(|r| r.capture().is_some()) else {
            return;
        };
        let saving = self.save.as_ref().and_then(SaveJob::progress);
        let (follow, notice) = (&mut self.follow, self.notice.as_deref());
        egui::Panel::bottom("scope-live-status")
            .show(ui, |ui| status_bar_ui(ui, rec, follow, saving, notice));
    }

    /// The open recording's panels: timeline, topic tree, health or inspector, plots.
    fn recording_ui(&mut self, ui: &mut egui::Ui, actions: &mut Vec<Action>) {
        let Scope {
            recording: Some(rec),
            playback,
            filter,
            view,
            right,
            inspector,
            persisted,
            focused_plot,
            log_view,
            cursors,
            range_indexes,
            ..
        } = self
        else {
            return;
        };
        egui::Panel::bottom("scope-timeline").show(ui, |ui| {
            ui.add_space(4.0);
            actions.extend(timeline_ui(ui, rec, playback).map(Action::Step));
            ui.add_space(4.0);
        });
        // Side panels leave the plots at least half of a small window (800 px wide).
        let window_w = ui.available_width();
        egui::Panel::left("scope-tree")
            .resizable(true)
            .default_size((window_w * 0.22).clamp(160.0, 280.0))
            .max_size((window_w * 0.3).clamp(160.0, 480.0))
            .show(ui, |ui| {
                ui.heading("Topics");
                actions.extend(topic_tree_ui(ui, rec, filter, &persisted.layout.derived));
            });
        egui::Panel::right("scope-side")
            .resizable(true)
            .default_size((window_w * 0.26).clamp(200.0, 340.0))
            .max_size((window_w * 0.34).clamp(200.0, 520.0))
            .show(ui, |ui| {
                let playhead_ns = playback.playhead_ns;
                let inspector = inspector.as_mut();
                actions.extend(side_panel_ui(
                    ui,
                    rec,
                    right,
                    &persisted.layout,
                    SideState {
                        inspector,
                        log: log_view,
                        cursors,
                        view,
                        indexes: range_indexes,
                    },
                    playhead_ns,
                ));
            });
        egui::CentralPanel::default().show(ui, |ui| {
            let plotted = plot_stack_ui(
                ui,
                rec,
                &persisted.layout,
                view,
                playback.playhead_ns,
                *focused_plot,
                cursors,
            );
            actions.extend(plotted.into_actions());
        });
    }

    /// Does what the user asked for, in order.
    fn apply(&mut self, ctx: &egui::Context, actions: Vec<Action>) {
        for action in actions {
            match action {
                Action::Open(path) => {
                    self.path_entry = None;
                    self.open(path);
                }
                Action::ShowPathEntry => {
                    self.path_entry = Some(PathEntry::new(
                        PickKind::Folder,
                        "The path of a bag directory, a rosbag2 directory or an .mcap file:",
                    ));
                }
                Action::ClosePathEntry => self.path_entry = None,
                Action::Quit => ctx.send_viewport_cmd(egui::ViewportCommand::Close),
                Action::ToggleHelp => self.help_open = !self.help_open,
                Action::Escape if self.help_open => self.help_open = false,
                Action::Escape => self.focused_plot = None,
                Action::SaveRecordingTo(dir) => {
                    self.path_entry = None;
                    self.save_recording_to(dir);
                }
                Action::ExportSignals => self.export_signals(None),
                Action::ExportSignalsTo(path) => self.export_signals(Some(path)),
                Action::SaveLayout => self.save_layout(),
                Action::OpenLayout => self.open_layout(),
                Action::SaveLayoutTo(path) => self.save_layout_to(path),
                Action::OpenLayoutFrom(path) => self.open_layout_from(path),
                Action::PickFile => self.pick(PickKind::File),
                Action::PickSecond(kind) => self.pick(kind),
                Action::ShowSecondPathEntry => {
                    self.path_entry = Some(PathEntry::new(
                        PickKind::SecondFolder,
                        "The path of the recording to compare with (a bag or rosbag2 \
                         directory, or an .mcap file):",
                    ));
                }
                Action::OpenSecond(path) => {
                    self.path_entry = None;
                    self.open_second(path);
                }
                Action::SecondOffset(offset_ns) => {
                    if let Some(rec) = &mut self.recording {
                        rec.set_second_offset_ns(offset_ns);
                    }
                }
                Action::CloseSecond => {
                    if let Some(rec) = &mut self.recording {
                        rec.close_second();
                    }
                }
                Action::PickFolder => self.pick(PickKind::Folder),
                Action::ShowConnectDialog => self.connect_form.open = true,
                Action::Connect(options) => self.start_live(options),
                Action::SaveRecording => self.save_recording(),
                Action::LiveDemo => self.open_demo(),
                Action::DemoRecording => self.open_demo_recording(),
                Action::Close => self.close(),
                Action::ResetView => self.zoom(Zoom::All),
                Action::DefaultLayout => self.apply_default_layout(),
                Action::ClearPlots => {
                    self.persisted.layout = Layout::default();
                    self.focused_plot = None;
                }
                Action::DismissError => self.error = None,
                // Live, the plots follow the newest data instead (Follow).
                Action::TogglePlaying if self.is_live() => {}
                Action::TogglePlaying => self.playback.playing = !self.playback.playing,
                Action::ToggleFollowing => self.follow = !self.follow,
                Action::StopFollowing => self.follow = false,
                Action::Step(step) => self.step(step),
                Action::ZoomIn => self.zoom(Zoom::In),
                Action::ZoomOut => self.zoom(Zoom::Out),
                Action::AddSignal(signal) => self.add_signal(signal),
                Action::NewDerived(from) => {
                    self.derived_form =
                        DerivedForm::new_signal(from.as_ref(), &self.persisted.layout.derived);
                }
                Action::EditDerived(name) => {
                    if let Some(spec) = self
                        .persisted
                        .layout
                        .derived
                        .iter()
                        .find(|d| d.name == name)
                    {
                        self.derived_form = DerivedForm::edit(spec);
                    }
                }
                Action::RemoveDerived(name) => self.persisted.layout.undefine(&name),
                Action::DefineDerived { replacing, spec } => {
                    let signal = spec.signal();
                    let new = replacing.is_none();
                    self.persisted.layout.define(replacing.as_deref(), spec);
                    // A new one is plotted at once, as a clicked field is.
                    if new {
                        self.add_signal(signal);
                    }
                }
                Action::Seek(t_ns) => self.playback.playhead_ns = t_ns,
                Action::Focus(plot) => self.focused_plot = Some(plot),
                Action::PlaceCursor(which, t_ns) => self.place_cursor(which, t_ns),
                Action::CursorAtPlayhead(which) => {
                    self.place_cursor(which, self.playback.playhead_ns);
                }
                Action::ClearCursors => self.cursors.clear(),
                Action::DropSignal { plot, signal } => self.persisted.layout.add(plot, signal),
                Action::RemoveSignal { plot, signal } => {
                    if let Some(p) = self.persisted.layout.plots.get_mut(plot)
                        && signal < p.signals.len()
                    {
                        p.signals.remove(signal);
                    }
                }
                Action::MakeXy { plot, signal } => {
                    if let Some(p) = self.persisted.layout.plots.get_mut(plot)
                        && signal < p.signals.len()
                        && p.signals.len() >= 2
                    {
                        p.x = Some(p.signals.remove(signal));
                    }
                }
                Action::Xy { plot, xy } => {
                    if let Some(p) = self.persisted.layout.plots.get_mut(plot) {
                        match xy {
                            XyAction::TimePlot => {
                                if let Some(x) = p.x.take() {
                                    p.signals.insert(0, x);
                                }
                                p.equal_axes = false;
                            }
                            XyAction::EqualAxes(on) => p.equal_axes = on,
                        }
                    }
                }
                Action::RemovePlot(plot) => {
                    if plot < self.persisted.layout.plots.len() {
                        self.persisted.layout.plots.remove(plot);
                        self.focused_plot = None;
                    }
                }
                Action::ShowLog(topic) => {
                    if let Some(rec) = &self.recording
                        && let Some(info) = rec.summary().topics.get(topic)
                    {
                        let repaint = ctx.clone();
                        self.log_view.lines = Some(LogLines::start(
                            Arc::clone(&rec.source),
                            topic,
                            info.clone(),
                            Arc::new(move || repaint.request_repaint()),
                        ));
                    }
                }
                Action::Inspect { topic, t_ns } => {
                    if let (Some(inspector), Some(info)) = (
                        &mut self.inspector,
                        self.recording
                            .as_ref()
                            .and_then(|r| r.summary().topics.get(topic)),
                    ) {
                        inspector.request(topic, t_ns, info);
                    }
                }
            }
        }
    }

    /// Part of `logic`: where a save has got to.
    fn poll_save(&mut self) {
        let Some(job) = &self.save else {
            return;
        };
        match job.poll() {
            SaveState::Running => {}
            SaveState::NothingPicked => {
                self.save = None;
                self.path_entry = Some(PathEntry::after_empty_dialog(PickKind::SaveBag));
            }
            SaveState::Picked(dir) => {
                self.save = None;
                self.save_recording_to(dir);
            }
            SaveState::Saved(notice) => {
                self.save = None;
                self.notice = Some(notice);
            }
            SaveState::Failed(e) => {
                self.save = None;
                self.error = Some(e);
            }
        }
    }

    /// Part of `logic`: takes in what the loader or the live capture delivered, and lays out
    /// the default plots once there is something to plot.
    fn poll_recording(&mut self, ctx: &egui::Context) {
        let Some(rec) = &mut self.recording else {
            return;
        };
        // Both recordings, when a second one is open (a layout may name either's signals).
        let all_loaded = |r: &Recording| r.loaded() && r.second().is_none_or(Recording::loaded);
        let was_loaded = all_loaded(rec);
        rec.poll(POLL_BUDGET);
        let just_loaded = !was_loaded && all_loaded(rec);
        let repaint_ctx = ctx.clone();
        let repaint: Arc<dyn Fn() + Send + Sync> = Arc::new(move || repaint_ctx.request_repaint());
        if rec.update_derived(&self.persisted.layout.derived, &repaint) {
            // New columns, perhaps of the same length and first time as the old ones (an
            // edited expression): statistics summarised from the old ones must go.
            self.range_indexes.retain(|s| s.topic != DERIVED_TOPIC);
        }
        if !rec.loaded() {
            // Progress counters move without events.
            ctx.request_repaint_after(Duration::from_millis(100));
        }
        if let Some(e) = rec.take_failure() {
            self.error = Some(e);
        }
        if just_loaded && !self.layout_settled {
            self.settle_layout();
        }
        let Some(rec) = self.recording.as_ref().filter(|r| r.capture().is_some()) else {
            return;
        };
        // A live capture's layout waits for data on a few topics.
        let with_data = (0..rec.topics.len())
            .filter(|&i| rec.data(i).is_some_and(|d| !d.times_ns.is_empty()))
            .count();
        if !self.layout_settled && with_data >= 3 {
            self.settle_layout();
        }
    }

    /// Part of `logic`: takes in the log view's lines; of a live capture, reads the newer
    /// ones every so often.
    fn poll_log(&mut self, ctx: &egui::Context) {
        let Some(mut lines) = self.log_view.lines.take() else {
            return;
        };
        lines.poll();
        if let Some(rec) = self.recording.as_ref().filter(|r| r.capture().is_some())
            && let Some(info) = rec.summary().topics.get(lines.topic)
        {
            let repaint = ctx.clone();
            lines = lines.read_newer(
                Arc::clone(&rec.source),
                info.clone(),
                Arc::new(move || repaint.request_repaint()),
            );
        }
        self.log_view.lines = Some(lines);
    }

    /// Part of `logic`: moves the playhead of a recording being played back. Not while the
    /// window is hidden: nobody watches, and the frame time is that of the last frame shown.
    fn play(&mut self, ctx: &egui::Context) {
        let Some(rec) = self.recording.as_ref().filter(|r| r.capture().is_none()) else {
            return;
        };
        if ctx.input(|i| i.viewport().visible()) == Some(false) {
            return;
        }
        let dt = f64::from(ctx.input(|i| i.stable_dt)).min(0.1);
        advance(&mut self.playback, dt, rec.t1_ns());
        if self.playback.playing {
            ctx.request_repaint();
        }
    }

    /// After a frame: lets a `--screenshot-to` count frames, shoot, or give up.
    fn screenshot_after_frame(&mut self, ctx: &egui::Context) {
        let Some(job) = &mut self.screenshot else {
            return;
        };
        // A live capture is shown once its plots hold several seconds of data.
        let plotted = !self.persisted.layout.plots.is_empty();
        let live_ready = |r: &Recording| {
            r.capture().is_none()
                || (plotted && r.t1_ns().saturating_sub(r.t0_ns()) >= 8_000_000_000)
        };
        let ready = self.recording.as_ref().is_some_and(|r| {
            r.loaded() && r.second().is_none_or(Recording::loaded) && live_ready(r)
        }) && self.opening == 0
            && self.commands.is_empty();
        let failed = self
            .error
            .as_ref()
            .filter(|_| self.opening == 0 && self.recording.is_none());
        if job.after_frame(ctx, ready, failed) {
            self.screenshot = None;
        }
    }
}

impl eframe::App for Scope {
    fn logic(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        Scope::logic(self, ctx);
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        Scope::ui(self, ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, eframe::APP_KEY, &self.persisted);
    }
}

/// Puts `path` first in `recent` (once), keeping the [`RECENT_MAX`] latest.
fn remember(recent: &mut Vec<String>, path: &std::path::Path) {
    let s = path.display().to_string();
    recent.retain(|p| p != &s);
    recent.insert(0, s);
    recent.truncate(RECENT_MAX);
}

/// Restores what was saved by [`eframe::App::save`].
pub fn restore(storage: Option<&dyn eframe::Storage>) -> Persisted {
    storage
        .and_then(|s| eframe::get_value::<Persisted>(s, eframe::APP_KEY))
        .unwrap_or_default()
}
