//! One X11 connection: screen capture, the window list and XTEST input.

use std::fs::File;
use std::os::fd::OwnedFd;
use std::os::unix::fs::FileExt as _;
use std::time::Duration;

use gui_core::{Point, Rect, Size};
use image::RgbImage;
use x11rb::connection::{Connection, RequestConnection as _};
use x11rb::errors::{ConnectionError, ReplyError, ReplyOrIdError};
use x11rb::protocol::shm::{self, ConnectionExt as _};
use x11rb::protocol::xproto::{
    self, AtomEnum, ConfigureWindowAux, ConnectionExt as _, CreateWindowAux, ImageFormat,
    ImageOrder, InputFocus, MapState, Window, WindowClass,
};
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;

use crate::{Error, Result};

/// A mapped top-level window on the device's X server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DesktopWindow {
    pub id: u32,
    /// Position and size on the screen, border included.
    pub rect: Rect,
    /// `_NET_WM_NAME`, else `WM_NAME`; empty when the window has neither.
    pub title: String,
    /// Menus, tooltips and popups place themselves and bypass a window manager.
    pub override_redirect: bool,
    /// `_NET_WM_PID`, when the toolkit sets it.
    pub pid: Option<u32>,
}

/// Keysyms of the named keys (X11 `keysymdef.h`).
pub(crate) mod keysym {
    pub const BACKSPACE: u32 = 0xff08;
    pub const TAB: u32 = 0xff09;
    pub const RETURN: u32 = 0xff0d;
    pub const ESCAPE: u32 = 0xff1b;
    pub const HOME: u32 = 0xff50;
    pub const LEFT: u32 = 0xff51;
    pub const UP: u32 = 0xff52;
    pub const RIGHT: u32 = 0xff53;
    pub const DOWN: u32 = 0xff54;
    pub const END: u32 = 0xff57;
    pub const DELETE: u32 = 0xffff;
    pub const SHIFT_L: u32 = 0xffe1;
}

/// The keysym that types `c`: Latin-1 keysyms equal their code point, every other
/// character has `0x0100_0000 + code point`; control characters map to their keys.
pub(crate) fn keysym_of(c: char) -> u32 {
    match c {
        '\n' | '\r' => keysym::RETURN,
        '\t' => keysym::TAB,
        '\u{8}' => keysym::BACKSPACE,
        '\u{1b}' => keysym::ESCAPE,
        '\u{7f}' => keysym::DELETE,
        ' '..='~' | '\u{a0}'..='\u{ff}' => c as u32,
        _ => 0x0100_0000 + c as u32,
    }
}

/// Maps x11rb's errors to ours: a broken connection means the X server is gone.
pub(crate) trait XResultExt<T> {
    fn x(self, request: &str) -> Result<T>;
}

fn lost(request: &str, e: &ConnectionError) -> Error {
    Error::DeviceLost {
        what: format!("X connection broke during {request}: {e}"),
    }
}

fn refused(request: &str, e: &x11rb::x11_utils::X11Error) -> Error {
    Error::X11 {
        request: request.to_owned(),
        detail: format!("{:?} (bad value {})", e.error_kind, e.bad_value),
    }
}

impl<T> XResultExt<T> for Result<T, ConnectionError> {
    fn x(self, request: &str) -> Result<T> {
        self.map_err(|e| lost(request, &e))
    }
}

impl<T> XResultExt<T> for Result<T, ReplyError> {
    fn x(self, request: &str) -> Result<T> {
        self.map_err(|e| match e {
            ReplyError::ConnectionError(e) => lost(request, &e),
            ReplyError::X11Error(e) => refused(request, &e),
        })
    }
}

impl<T> XResultExt<T> for Result<T, ReplyOrIdError> {
    fn x(self, request: &str) -> Result<T> {
        self.map_err(|e| match e {
            ReplyOrIdError::ConnectionError(e) => lost(request, &e),
            ReplyOrIdError::X11Error(e) => refused(request, &e),
            ReplyOrIdError::IdsExhausted => Error::X11 {
                request: request.to_owned(),
                detail: "no more resource ids".into(),
            },
        })
    }
}

/// `Ok(None)` when the server refused the request because the window is gone: windows
/// come and go between a query and the next.
fn unless_gone<T>(r: Result<T, ReplyError>, request: &str) -> Result<Option<T>> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(ReplyError::X11Error(_)) => Ok(None),
        Err(e) => Err(e).x(request),
    }
}

/// How the root window's pixels are laid out in a ZPixmap image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PixelLayout {
    pub bits_per_pixel: u8,
    pub scanline_pad: u8,
    pub msb_first: bool,
    /// Red, green, blue masks of the root visual.
    pub masks: [u32; 3],
}

impl PixelLayout {
    /// Converts a ZPixmap of `size` to RGB.
    pub(crate) fn decode(&self, data: &[u8], size: Size) -> Result<RgbImage> {
        let (w, h) = (size.width as usize, size.height as usize);
        let bpp = self.bits_per_pixel as usize;
        if !matches!(bpp, 16 | 24 | 32) {
            return Err(Error::X11 {
                request: "GetImage".into(),
                detail: format!("unsupported {bpp} bits per pixel (need 16, 24 or 32)"),
            });
        }
        let pad = (self.scanline_pad as usize).max(8);
        let stride = (w * bpp).div_ceil(pad) * pad / 8;
        if data.len() < stride * h {
            return Err(Error::X11 {
                request: "GetImage".into(),
                detail: format!(
                    "{} bytes for a {w}x{h} image of stride {stride}",
                    data.len()
                ),
            });
        }
        let bytes = bpp / 8;
        let mut out = RgbImage::new(size.width, size.height);
        let buf: &mut [u8] = &mut out;
        // The common case, 32-bit little-endian xRGB, is a byte shuffle.
        if bytes == 4 && !self.msb_first && self.masks == [0xff_0000, 0xff00, 0xff] {
            for (y, row) in buf.chunks_exact_mut(w * 3).enumerate() {
                let src = &data[y * stride..y * stride + w * 4];
                for (dst, px) in row.chunks_exact_mut(3).zip(src.chunks_exact(4)) {
                    dst.copy_from_slice(&[px[2], px[1], px[0]]);
                }
            }
            return Ok(out);
        }
        let channels = self.masks.map(|m| (m.trailing_zeros(), m.count_ones()));
        for (y, row) in buf.chunks_exact_mut(w * 3).enumerate() {
            let src = &data[y * stride..y * stride + w * bytes];
            for (dst, px) in row.chunks_exact_mut(3).zip(src.chunks_exact(bytes)) {
                let v = if self.msb_first {
                    px.iter().fold(0u32, |v, &b| (v << 8) | b as u32)
                } else {
                    px.iter().rev().fold(0u32, |v, &b| (v << 8) | b as u32)
                };
                for (c, ((shift, bits), mask)) in channels.iter().zip(self.masks).enumerate() {
                    let max = (1u32 << bits).saturating_sub(1).max(1);
                    dst[c] = (((v & mask) >> shift) * 255 / max) as u8;
                }
            }
        }
        Ok(out)
    }
}

/// A shared-memory segment the server writes screenshots into.
///
/// The workspace has no unsafe code, so the segment is not mapped here: it is a file on
/// tmpfs whose descriptor the server maps (`ShmAttachFd`), and we read it back with
/// `pread`, which sees the same pages. One copy of 3 MB instead of a 3 MB reply through
/// the socket.
#[derive(Debug)]
struct ShmSegment {
    seg: shm::Seg,
    file: File,
}

#[derive(Debug, Clone, Copy)]
struct Atoms {
    net_wm_name: u32,
    utf8_string: u32,
    net_wm_pid: u32,
}

/// Keysyms per keycode, as the server maps them.
#[derive(Debug)]
struct Keymap {
    min_keycode: u8,
    per_keycode: usize,
    keysyms: Vec<u32>,
    /// Keycodes that map nothing, free for characters the keyboard lacks.
    spare: Vec<u8>,
    next_spare: usize,
}

impl Keymap {
    fn load(conn: &RustConnection) -> Result<Self> {
        let setup = conn.setup();
        let (min, max) = (setup.min_keycode, setup.max_keycode);
        let r = conn
            .get_keyboard_mapping(min, max - min + 1)
            .x("GetKeyboardMapping")?
            .reply()
            .x("GetKeyboardMapping")?;
        let per_keycode = (r.keysyms_per_keycode as usize).max(1);
        let spare = r
            .keysyms
            .chunks(per_keycode)
            .enumerate()
            .filter(|(_, syms)| syms.iter().all(|&s| s == 0))
            .map(|(i, _)| min + i as u8)
            .collect();
        Ok(Self {
            min_keycode: min,
            per_keycode,
            keysyms: r.keysyms,
            spare,
            next_spare: 0,
        })
    }

    /// The keycode that produces `sym`, and whether Shift must be held. The first two
    /// columns of each keycode are its plain and shifted keysyms.
    fn find(&self, sym: u32) -> Option<(u8, bool)> {
        for column in 0..self.per_keycode.min(2) {
            for (i, syms) in self.keysyms.chunks(self.per_keycode).enumerate() {
                if syms[column] == sym {
                    return Some((self.min_keycode + i as u8, column == 1));
                }
            }
        }
        None
    }
}

/// The device's connection to its X server.
#[derive(Debug)]
pub(crate) struct XSession {
    conn: RustConnection,
    root: Window,
    size: Size,
    black_pixel: u32,
    layout: PixelLayout,
    atoms: Atoms,
    keymap: Keymap,
    shm: Option<ShmSegment>,
}

impl XSession {
    pub(crate) fn connect(display: &str) -> Result<Self> {
        let (conn, screen_num) = x11rb::connect(Some(display)).map_err(|e| Error::DeviceLost {
            what: format!("cannot connect to X display {display}: {e}"),
        })?;
        let setup = conn.setup();
        let screen = &setup.roots[screen_num];
        let depth = screen.root_depth;
        let format = setup
            .pixmap_formats
            .iter()
            .find(|f| f.depth == depth)
            .ok_or_else(|| Error::X11 {
                request: "setup".into(),
                detail: format!("no pixmap format for the root depth {depth}"),
            })?;
        let visual = screen
            .allowed_depths
            .iter()
            .flat_map(|d| &d.visuals)
            .find(|v| v.visual_id == screen.root_visual)
            .ok_or_else(|| Error::X11 {
                request: "setup".into(),
                detail: "the root visual is not listed".into(),
            })?;
        let layout = PixelLayout {
            bits_per_pixel: format.bits_per_pixel,
            scanline_pad: format.scanline_pad,
            msb_first: setup.image_byte_order == ImageOrder::MSB_FIRST,
            masks: [visual.red_mask, visual.green_mask, visual.blue_mask],
        };
        let root = screen.root;
        let size = Size::new(
            screen.width_in_pixels.into(),
            screen.height_in_pixels.into(),
        );
        let black_pixel = screen.black_pixel;
        if conn
            .extension_information(x11rb::protocol::xtest::X11_EXTENSION_NAME)
            .x("QueryExtension")?
            .is_none()
        {
            return Err(Error::X11 {
                request: "QueryExtension".into(),
                detail: format!("display {display} has no XTEST extension"),
            });
        }
        let intern = |name: &str| -> Result<u32> {
            Ok(conn
                .intern_atom(false, name.as_bytes())
                .x("InternAtom")?
                .reply()
                .x("InternAtom")?
                .atom)
        };
        let atoms = Atoms {
            net_wm_name: intern("_NET_WM_NAME")?,
            utf8_string: intern("UTF8_STRING")?,
            net_wm_pid: intern("_NET_WM_PID")?,
        };
        let keymap = Keymap::load(&conn)?;
        let bytes = size.area() as usize * (layout.bits_per_pixel as usize).div_ceil(8);
        let shm = attach_shm(&conn, bytes);
        if shm.is_none() {
            let name = display;
            tracing::info!("{name}: no MIT-SHM, screenshots go through GetImage");
        }
        Ok(Self {
            conn,
            root,
            size,
            black_pixel,
            layout,
            atoms,
            keymap,
            shm,
        })
    }

    pub(crate) fn size(&self) -> Size {
        self.size
    }

    pub(crate) fn uses_shm(&self) -> bool {
        self.shm.is_some()
    }

    /// Waits until the server has processed every request sent so far.
    pub(crate) fn barrier(&self) -> Result<()> {
        self.conn
            .get_input_focus()
            .x("GetInputFocus")?
            .reply()
            .x("GetInputFocus")?;
        Ok(())
    }

    /// The whole root window as RGB.
    pub(crate) fn capture(&mut self) -> Result<RgbImage> {
        let (w, h) = (self.size.width as u16, self.size.height as u16);
        if let Some(seg) = &self.shm {
            let r = self
                .conn
                .shm_get_image(
                    self.root,
                    0,
                    0,
                    w,
                    h,
                    !0,
                    ImageFormat::Z_PIXMAP.into(),
                    seg.seg,
                    0,
                )
                .x("ShmGetImage")?
                .reply();
            match r {
                Ok(r) => {
                    let mut data = vec![0; r.size as usize];
                    seg.file
                        .read_exact_at(&mut data, 0)
                        .map_err(|e| Error::io("read the screenshot segment", e))?;
                    return self.layout.decode(&data, self.size);
                }
                Err(ReplyError::X11Error(e)) => {
                    tracing::warn!("ShmGetImage refused ({:?}); using GetImage", e.error_kind);
                    self.shm = None;
                }
                Err(e) => return Err(e).x("ShmGetImage"),
            }
        }
        let r = self
            .conn
            .get_image(ImageFormat::Z_PIXMAP, self.root, 0, 0, w, h, !0)
            .x("GetImage")?
            .reply()
            .x("GetImage")?;
        self.layout.decode(&r.data, self.size)
    }

    /// Mapped children of the root, bottom to top.
    pub(crate) fn windows(&self) -> Result<Vec<DesktopWindow>> {
        let tree = self
            .conn
            .query_tree(self.root)
            .x("QueryTree")?
            .reply()
            .x("QueryTree")?;
        let mut out = Vec::new();
        for &id in &tree.children {
            let attrs = self
                .conn
                .get_window_attributes(id)
                .x("GetWindowAttributes")?
                .reply();
            let Some(attrs) = unless_gone(attrs, "GetWindowAttributes")? else {
                continue;
            };
            if attrs.map_state != MapState::VIEWABLE || attrs.class != WindowClass::INPUT_OUTPUT {
                continue;
            }
            let geometry = self.conn.get_geometry(id).x("GetGeometry")?.reply();
            let Some(g) = unless_gone(geometry, "GetGeometry")? else {
                continue;
            };
            let border = 2 * u32::from(g.border_width);
            let rect = Rect::new(
                g.x.into(),
                g.y.into(),
                u32::from(g.width) + border,
                u32::from(g.height) + border,
            );
            let mut title = self.title(id)?;
            if title.is_empty() {
                // Under a reparenting window manager the title is on the client window
                // inside the frame.
                let children = self.conn.query_tree(id).x("QueryTree")?.reply();
                for child in unless_gone(children, "QueryTree")?
                    .map(|t| t.children)
                    .unwrap_or_default()
                {
                    title = self.title(child)?;
                    if !title.is_empty() {
                        break;
                    }
                }
            }
            let pid = self
                .property(id, self.atoms.net_wm_pid)?
                .and_then(|p| p.value32().and_then(|mut v| v.next()));
            out.push(DesktopWindow {
                id,
                rect,
                title,
                override_redirect: attrs.override_redirect,
                pid,
            });
        }
        Ok(out)
    }

    fn property(&self, window: Window, atom: u32) -> Result<Option<xproto::GetPropertyReply>> {
        let r = self
            .conn
            .get_property(false, window, atom, AtomEnum::ANY, 0, 1024)
            .x("GetProperty")?
            .reply();
        Ok(unless_gone(r, "GetProperty")?.filter(|p| p.type_ != x11rb::NONE))
    }

    fn title(&self, window: Window) -> Result<String> {
        if let Some(p) = self.property(window, self.atoms.net_wm_name)?
            && p.type_ == self.atoms.utf8_string
            && !p.value.is_empty()
        {
            return Ok(String::from_utf8_lossy(&p.value).into_owned());
        }
        Ok(match self.property(window, AtomEnum::WM_NAME.into())? {
            // STRING is Latin-1, whose code points are its bytes.
            Some(p) if p.type_ == u32::from(AtomEnum::STRING) => {
                p.value.iter().map(|&b| char::from(b)).collect()
            }
            Some(p) => String::from_utf8_lossy(&p.value).into_owned(),
            None => String::new(),
        })
    }

    /// The top-level window under the pointer, if any.
    pub(crate) fn window_under_pointer(&self) -> Result<Option<Window>> {
        let r = self
            .conn
            .query_pointer(self.root)
            .x("QueryPointer")?
            .reply()
            .x("QueryPointer")?;
        Ok((r.child != x11rb::NONE).then_some(r.child))
    }

    fn clamp(&self, p: Point) -> (i16, i16) {
        let c = |v: i32, max: u32| v.clamp(0, max.saturating_sub(1) as i32) as i16;
        (c(p.x, self.size.width), c(p.y, self.size.height))
    }

    fn fake(&self, kind: u8, detail: u8, at: (i16, i16)) -> Result<()> {
        self.conn
            .xtest_fake_input(kind, detail, x11rb::CURRENT_TIME, self.root, at.0, at.1, 0)
            .x("XTestFakeInput")?;
        Ok(())
    }

    pub(crate) fn move_pointer(&self, p: Point) -> Result<()> {
        self.fake(xproto::MOTION_NOTIFY_EVENT, 0, self.clamp(p))
    }

    /// `count` presses and releases of `button` (1 left, 2 middle, 3 right, 4-7 wheel) at
    /// `p`. Clicks in one burst carry the same server time, so toolkits see a multi-click.
    pub(crate) fn click(&self, p: Point, button: u8, count: u32) -> Result<()> {
        self.move_pointer(p)?;
        for _ in 0..count {
            self.fake(xproto::BUTTON_PRESS_EVENT, button, (0, 0))?;
            self.fake(xproto::BUTTON_RELEASE_EVENT, button, (0, 0))?;
        }
        self.barrier()
    }

    /// Presses the left button at `from`, moves to `to` in steps and releases.
    pub(crate) fn drag(&self, from: Point, to: Point) -> Result<()> {
        const STEPS: i32 = 8;
        self.move_pointer(from)?;
        self.fake(xproto::BUTTON_PRESS_EVENT, 1, (0, 0))?;
        self.barrier()?;
        for i in 1..=STEPS {
            let p = Point::new(
                from.x + (to.x - from.x) * i / STEPS,
                from.y + (to.y - from.y) * i / STEPS,
            );
            self.move_pointer(p)?;
            // Toolkits that start a drag on a timer or a motion threshold see each step.
            self.barrier()?;
            std::thread::sleep(Duration::from_millis(5));
        }
        self.fake(xproto::BUTTON_RELEASE_EVENT, 1, (0, 0))?;
        self.barrier()
    }

    /// Presses and releases the key for `sym`, with Shift when its keycode needs it. A
    /// keysym the keyboard lacks is bound to a spare keycode first.
    pub(crate) fn key(&mut self, sym: u32) -> Result<()> {
        let (code, shift) = match self.keymap.find(sym) {
            Some(found) => found,
            None => (self.bind_spare(sym)?, false),
        };
        let shift_code = match shift {
            true => Some(
                self.keymap
                    .find(keysym::SHIFT_L)
                    .map(|(c, _)| c)
                    .ok_or_else(|| Error::X11 {
                        request: "keyboard mapping".into(),
                        detail: "no keycode for Shift_L".into(),
                    })?,
            ),
            false => None,
        };
        if let Some(s) = shift_code {
            self.fake(xproto::KEY_PRESS_EVENT, s, (0, 0))?;
        }
        self.fake(xproto::KEY_PRESS_EVENT, code, (0, 0))?;
        self.fake(xproto::KEY_RELEASE_EVENT, code, (0, 0))?;
        if let Some(s) = shift_code {
            self.fake(xproto::KEY_RELEASE_EVENT, s, (0, 0))?;
        }
        Ok(())
    }

    /// Types `text` character by character, then waits for the server.
    pub(crate) fn type_text(&mut self, text: &str) -> Result<()> {
        for c in text.chars() {
            self.key(keysym_of(c))?;
        }
        self.barrier()
    }

    fn bind_spare(&mut self, sym: u32) -> Result<u8> {
        let km = &mut self.keymap;
        let Some(&code) = km.spare.get(km.next_spare % km.spare.len().max(1)) else {
            return Err(Error::X11 {
                request: "ChangeKeyboardMapping".into(),
                detail: format!("no spare keycode to bind keysym {sym:#x}"),
            });
        };
        km.next_spare += 1;
        let mut syms = vec![0; km.per_keycode];
        syms[0] = sym;
        if km.per_keycode > 1 {
            syms[1] = sym;
        }
        let row = (code - km.min_keycode) as usize * km.per_keycode;
        km.keysyms[row..row + km.per_keycode].copy_from_slice(&syms);
        self.conn
            .change_keyboard_mapping(1, code, km.per_keycode as u8, &syms)
            .x("ChangeKeyboardMapping")?;
        self.barrier()?;
        // Clients reload their keymap when the MappingNotify reaches them.
        std::thread::sleep(Duration::from_millis(20));
        Ok(code)
    }

    pub(crate) fn configure(&self, window: Window, rect: Rect) -> Result<()> {
        self.conn
            .configure_window(
                window,
                &ConfigureWindowAux::new()
                    .x(rect.x)
                    .y(rect.y)
                    .width(rect.width.max(1))
                    .height(rect.height.max(1)),
            )
            .x("ConfigureWindow")?;
        self.barrier()
    }

    /// Covers the screen with a window of our own that takes the keyboard focus for a
    /// moment, then gives the focus back: the app is left and re-entered.
    pub(crate) fn switch_away_and_back(&self, away: Duration) -> Result<()> {
        let before = self
            .conn
            .get_input_focus()
            .x("GetInputFocus")?
            .reply()
            .x("GetInputFocus")?;
        let win = self.conn.generate_id().x("CreateWindow")?;
        self.conn
            .create_window(
                x11rb::COPY_DEPTH_FROM_PARENT,
                win,
                self.root,
                0,
                0,
                self.size.width as u16,
                self.size.height as u16,
                0,
                WindowClass::INPUT_OUTPUT,
                x11rb::COPY_FROM_PARENT,
                &CreateWindowAux::new().background_pixel(self.black_pixel),
            )
            .x("CreateWindow")?;
        self.conn.map_window(win).x("MapWindow")?;
        self.conn
            .set_input_focus(InputFocus::POINTER_ROOT, win, x11rb::CURRENT_TIME)
            .x("SetInputFocus")?;
        self.barrier()?;
        std::thread::sleep(away);
        self.conn.destroy_window(win).x("DestroyWindow")?;
        // The old focus window may be gone by now; the pointer then decides.
        let back = self
            .conn
            .set_input_focus(before.revert_to, before.focus, x11rb::CURRENT_TIME)
            .x("SetInputFocus")?
            .check();
        if back.is_err() {
            self.conn
                .set_input_focus(
                    InputFocus::POINTER_ROOT,
                    u32::from(InputFocus::POINTER_ROOT),
                    x11rb::CURRENT_TIME,
                )
                .x("SetInputFocus")?;
        }
        self.barrier()
    }
}

fn attach_shm(conn: &RustConnection, bytes: usize) -> Option<ShmSegment> {
    conn.extension_information(shm::X11_EXTENSION_NAME)
        .ok()
        .flatten()?;
    let v = conn.shm_query_version().ok()?.reply().ok()?;
    if (v.major_version, v.minor_version) < (1, 2) {
        return None;
    }
    let file = tempfile::tempfile_in("/dev/shm")
        .or_else(|_| tempfile::tempfile())
        .ok()?;
    file.set_len(bytes as u64).ok()?;
    let fd: OwnedFd = file.try_clone().ok()?.into();
    let seg = conn.generate_id().ok()?;
    conn.shm_attach_fd(seg, fd, false).ok()?.check().ok()?;
    Some(ShmSegment { seg, file })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pixel_layouts_convert_to_rgb() {
        let size = Size::new(2, 1);
        // 32 bpp little-endian xRGB: B G R x per pixel.
        let lsb = PixelLayout {
            bits_per_pixel: 32,
            scanline_pad: 32,
            msb_first: false,
            masks: [0xff_0000, 0xff00, 0xff],
        };
        let img = lsb.decode(&[3, 2, 1, 0, 30, 20, 10, 0], size).unwrap();
        assert_eq!(img.as_raw(), &[1, 2, 3, 10, 20, 30]);
        // The same pixels big-endian: x R G B.
        let msb = PixelLayout {
            msb_first: true,
            ..lsb
        };
        let img = msb.decode(&[0, 1, 2, 3, 0, 10, 20, 30], size).unwrap();
        assert_eq!(img.as_raw(), &[1, 2, 3, 10, 20, 30]);
        // 16 bpp RGB565, rows padded to 32 bits: white, then pure red.
        let rgb565 = PixelLayout {
            bits_per_pixel: 16,
            scanline_pad: 32,
            msb_first: false,
            masks: [0xf800, 0x07e0, 0x001f],
        };
        let img = rgb565
            .decode(&[0xff, 0xff, 0x00, 0xf8], Size::new(2, 1))
            .unwrap();
        assert_eq!(img.as_raw(), &[255, 255, 255, 255, 0, 0]);
        // Too little data is an error, not a panic.
        assert!(lsb.decode(&[0; 4], size).is_err());
    }

    #[test]
    fn characters_map_to_keysyms() {
        assert_eq!(keysym_of('a'), 0x61);
        assert_eq!(keysym_of('+'), 0x2b);
        assert_eq!(keysym_of('é'), 0xe9);
        assert_eq!(keysym_of('€'), 0x0100_20ac);
        assert_eq!(keysym_of('\n'), keysym::RETURN);
    }
}
