//! The visual prompt of Section III-A2 and the IMAGE view of Section III-B1: reading
//! order and rows, action types, the pixels drawn, and a golden image.
//!
//! `GUI_LLM_UPDATE_GOLDEN=1 cargo test -p gui-llm --test annotate` rewrites
//! `tests/data/annotate/golden.png`.

use std::path::PathBuf;

use gui_core::{Rect, Screenshot, Size, UiElement, UiHierarchy};
use gui_llm::{
    ActionType, AnnotateConfig, annotate, downscale_for_prompt, mark_action, number_widgets,
};
use image::{Rgb, RgbImage};

const BACKGROUND: Rgb<u8> = Rgb([250, 250, 250]);
const WHITE: Rgb<u8> = Rgb([255, 255, 255]);

fn element(class: &str, bounds: Rect) -> UiElement {
    UiElement {
        bounds,
        class: class.into(),
        ..UiElement::default()
    }
}

fn button(text: &str, bounds: Rect) -> UiElement {
    UiElement {
        text: text.into(),
        clickable: true,
        ..element("android.widget.Button", bounds)
    }
}

fn hierarchy(elements: Vec<UiElement>) -> UiHierarchy {
    UiHierarchy {
        app: "notes".into(),
        screen: "EditActivity".into(),
        elements,
    }
}

fn blank(width: u32, height: u32) -> RgbImage {
    RgbImage::from_pixel(width, height, BACKGROUND)
}

/// Three rows on a 320x240 screen, with the buttons of the first row listed out of
/// order and the two widgets of the second row at slightly different tops; plus
/// elements that must get no id.
fn three_rows() -> UiHierarchy {
    hierarchy(vec![
        // 0: a title nobody can act on.
        element("android.widget.TextView", Rect::new(0, 0, 320, 24)),
        // 1-3: first row, right to left in the document.
        button("Delete", Rect::new(220, 40, 80, 30)),
        button("Share", Rect::new(120, 40, 80, 30)),
        button("Save", Rect::new(10, 40, 80, 30)),
        // 4-5: second row, the checkbox 6 px lower than the field.
        UiElement {
            hint: "Title".into(),
            clickable: true,
            long_clickable: true,
            editable: true,
            ..element("android.widget.EditText", Rect::new(10, 100, 200, 36))
        },
        UiElement {
            text: "Pinned".into(),
            clickable: true,
            checkable: true,
            ..element("android.widget.CheckBox", Rect::new(230, 106, 30, 30))
        },
        // 6: below the screen.
        button("Hidden", Rect::new(10, 260, 80, 30)),
        // 7: left of the screen.
        button("Gone", Rect::new(-120, 40, 80, 30)),
        // 8: too small to hit.
        button("", Rect::new(300, 200, 2, 2)),
        // 9: third row, clickable and long-clickable.
        UiElement {
            long_clickable: true,
            ..button("Note 1", Rect::new(10, 170, 300, 50))
        },
    ])
}

#[test]
fn widgets_are_numbered_in_reading_order_by_rows() {
    let ui = three_rows();
    let widgets = number_widgets(&ui, Size::new(320, 240), &AnnotateConfig::default());
    let summary: Vec<(u32, usize, u32, bool)> = widgets
        .iter()
        .map(|w| (w.id, w.element, w.row, w.labelled))
        .collect();
    assert_eq!(
        summary,
        vec![
            (1, 3, 0, true),
            (2, 2, 0, false),
            (3, 1, 0, false),
            (4, 4, 1, true),
            (5, 5, 1, false),
            (6, 9, 2, true),
        ]
    );
    assert_eq!(widgets[0].bounds, Rect::new(10, 40, 80, 30));
    // The same input numbers the same way, whatever the run.
    assert_eq!(
        widgets,
        number_widgets(&ui, Size::new(320, 240), &AnnotateConfig::default())
    );

    // Demanding more than full overlap puts every widget in a row of its own.
    let strict = AnnotateConfig {
        row_overlap: 1.01,
        ..AnnotateConfig::default()
    };
    let rows: Vec<u32> = number_widgets(&ui, Size::new(320, 240), &strict)
        .iter()
        .map(|w| w.row)
        .collect();
    assert_eq!(rows, [0, 1, 2, 3, 4, 5]);

    let every = AnnotateConfig {
        label_every_widget: true,
        ..AnnotateConfig::default()
    };
    assert!(
        number_widgets(&ui, Size::new(320, 240), &every)
            .iter()
            .all(|w| w.labelled)
    );
}

#[test]
fn partly_visible_widgets_are_clipped_and_ties_follow_document_order() {
    let ui = hierarchy(vec![
        button("b", Rect::new(100, 10, 40, 20)),
        button("a", Rect::new(100, 10, 40, 20)),
        button("edge", Rect::new(-20, 50, 60, 20)),
    ]);
    let widgets = number_widgets(&ui, Size::new(200, 100), &AnnotateConfig::default());
    let order: Vec<usize> = widgets.iter().map(|w| w.element).collect();
    assert_eq!(order, vec![0, 1, 2]);
    assert_eq!(widgets[2].bounds, Rect::new(0, 50, 40, 20));
}

#[test]
fn a_widget_inside_a_container_starts_its_own_row() {
    // A scrollable list whose items are clickable: without the "beside" condition every
    // item would share the list's row and only the list would be labelled.
    let ui = hierarchy(vec![
        UiElement {
            scrollable: true,
            ..element(
                "androidx.recyclerview.widget.RecyclerView",
                Rect::new(0, 40, 320, 200),
            )
        },
        button("item 1", Rect::new(0, 40, 320, 48)),
        button("item 2", Rect::new(0, 88, 320, 48)),
        button("menu", Rect::new(280, 0, 40, 40)),
    ]);
    let widgets = number_widgets(&ui, Size::new(320, 240), &AnnotateConfig::default());
    let summary: Vec<(usize, u32, bool)> = widgets
        .iter()
        .map(|w| (w.element, w.row, w.labelled))
        .collect();
    assert_eq!(
        summary,
        vec![(3, 0, true), (0, 1, true), (1, 2, true), (2, 3, true)]
    );
}

#[test]
fn action_types_follow_the_widget_attributes() {
    let field = UiElement {
        clickable: true,
        long_clickable: true,
        editable: true,
        ..element("android.widget.EditText", Rect::new(0, 0, 10, 10))
    };
    assert_eq!(ActionType::of(&field), vec![ActionType::Input]);
    let checkbox = UiElement {
        clickable: true,
        checkable: true,
        ..element("android.widget.CheckBox", Rect::new(0, 0, 10, 10))
    };
    assert_eq!(ActionType::of(&checkbox), vec![ActionType::Check]);
    let item = UiElement {
        long_clickable: true,
        ..button("note", Rect::new(0, 0, 10, 10))
    };
    assert_eq!(
        ActionType::of(&item),
        vec![ActionType::Click, ActionType::LongClick]
    );
    let list = UiElement {
        scrollable: true,
        ..element("android.widget.ListView", Rect::new(0, 0, 10, 10))
    };
    assert_eq!(ActionType::of(&list), vec![ActionType::Scroll]);
    assert!(ActionType::of(&element("android.widget.TextView", Rect::default())).is_empty());

    let names: Vec<&str> = ActionType::ALL.iter().map(|t| t.colour_name()).collect();
    assert_eq!(names, ["red", "blue", "purple", "pink", "yellow"]);
    assert_eq!(ActionType::LongClick.verb(), "long click");
    assert_eq!(
        serde_json::to_string(&ActionType::LongClick).unwrap(),
        "\"long_click\""
    );
}

#[test]
fn boxes_and_labels_are_drawn_in_the_type_colours() {
    let ui = three_rows();
    let shot = Screenshot::new(blank(320, 240), 1.0, 0).unwrap();
    let annotation = annotate(&shot, &ui, &AnnotateConfig::default());
    let img = &annotation.image;
    let red = ActionType::Click.colour();
    let purple = ActionType::LongClick.colour();
    let blue = ActionType::Input.colour();
    let pink = ActionType::Check.colour();

    // "Share" (id 2, unlabelled): a 2 px red outline all round.
    for (x, y) in [(120, 40), (121, 41), (160, 69), (120, 55), (199, 55)] {
        assert_eq!(*img.get_pixel(x, y), red, "({x}, {y})");
    }
    assert_eq!(*img.get_pixel(122, 55), BACKGROUND);
    // Nothing is drawn above an unlabelled widget.
    assert_eq!(*img.get_pixel(125, 35), BACKGROUND);

    // "Note 1" clicks and long-clicks: red outside, purple inside.
    assert_eq!(*img.get_pixel(10, 195), red);
    assert_eq!(*img.get_pixel(11, 195), red);
    assert_eq!(*img.get_pixel(12, 195), purple);
    assert_eq!(*img.get_pixel(13, 195), purple);
    assert_eq!(*img.get_pixel(14, 195), BACKGROUND);
    assert_eq!(*img.get_pixel(309, 195), red);
    assert_eq!(*img.get_pixel(307, 195), purple);

    assert_eq!(*img.get_pixel(10, 120), blue);
    assert_eq!(*img.get_pixel(230, 120), pink);

    // The label of "Save" (id 1) sits above its top-left corner: 14x18 px at digit
    // scale 2, red with white digits.
    let label: Vec<Rgb<u8>> = (22..40)
        .flat_map(|y| (10..24).map(move |x| (x, y)))
        .map(|(x, y)| *img.get_pixel(x, y))
        .collect();
    assert!(label.contains(&WHITE));
    assert!(label.contains(&red));
    assert!(label.iter().all(|p| *p == WHITE || *p == red));
    assert_eq!(*img.get_pixel(24, 30), BACKGROUND);
    // The field's label (id 4) is blue.
    assert_eq!(*img.get_pixel(10, 82), blue);

    // Away from every box the screenshot is untouched, and the input is not modified.
    for (x, y) in [(5, 5), (160, 150), (315, 235), (100, 120)] {
        assert_eq!(*img.get_pixel(x, y), BACKGROUND, "({x}, {y})");
    }
    assert!(shot.pixels().pixels().all(|p| *p == BACKGROUND));

    assert_eq!(annotation.widget(5).unwrap().element, 5);
    assert!(annotation.widget(0).is_none());
    assert!(annotation.widget(7).is_none());
    let png = annotation.to_png().unwrap();
    let back = image::load_from_memory(&png).unwrap().into_rgb8();
    assert_eq!(&back, img);
}

#[test]
fn a_label_goes_inside_a_widget_at_the_top_of_the_screen() {
    let ui = hierarchy(vec![UiElement {
        scrollable: true,
        ..element("android.widget.ScrollView", Rect::new(0, 0, 100, 100))
    }]);
    let shot = Screenshot::new(blank(100, 100), 1.0, 0).unwrap();
    let img = annotate(&shot, &ui, &AnnotateConfig::default()).image;
    let yellow = ActionType::Scroll.colour();
    // The label fills (0..14, 0..18); on yellow the digits are dark for legibility.
    assert_eq!(*img.get_pixel(12, 16), yellow);
    let label: Vec<Rgb<u8>> = (0..18)
        .flat_map(|y| (0..14).map(move |x| (x, y)))
        .map(|(x, y)| *img.get_pixel(x, y))
        .collect();
    assert!(label.contains(&Rgb([0, 0, 0])));
    assert_eq!(*img.get_pixel(50, 0), yellow);
    assert_eq!(*img.get_pixel(50, 50), BACKGROUND);
}

#[test]
fn a_label_never_lies_on_the_box_of_the_widget_above() {
    let ui = hierarchy(vec![
        button("upper", Rect::new(10, 30, 100, 30)),
        button("lower", Rect::new(10, 60, 100, 30)),
    ]);
    let shot = Screenshot::new(blank(200, 120), 1.0, 0).unwrap();
    let img = annotate(&shot, &ui, &AnnotateConfig::default()).image;
    let white_in = |x0: u32, y0: u32| {
        (y0..y0 + 18).any(|y| (x0..x0 + 14).any(|x| *img.get_pixel(x, y) == WHITE))
    };
    // The upper label has room above; the lower one would cover the upper box, so it
    // goes inside its own.
    assert!(white_in(10, 12));
    assert!(white_in(10, 60));
    assert_eq!(*img.get_pixel(15, 50), BACKGROUND);
}

#[test]
fn drawing_sizes_follow_the_device_scale() {
    let ui = hierarchy(vec![button("ok", Rect::new(40, 80, 100, 60))]);
    let shot = Screenshot::new(blank(200, 200), 2.0, 0).unwrap();
    let img = annotate(&shot, &ui, &AnnotateConfig::default()).image;
    let red = ActionType::Click.colour();
    // A 4 px line and a 28x36 label above the box.
    assert_eq!(*img.get_pixel(43, 110), red);
    assert_eq!(*img.get_pixel(44, 110), BACKGROUND);
    assert_eq!(*img.get_pixel(41, 44), red);
    assert_eq!(*img.get_pixel(41, 43), BACKGROUND);
    assert_eq!(*img.get_pixel(68, 79), BACKGROUND);
}

#[test]
fn mark_action_outlines_the_acted_widget_and_captions_the_step() {
    let shot = Screenshot::new(blank(200, 150), 1.0, 0).unwrap();
    let red = ActionType::Click.colour();
    let img = mark_action(&shot, Rect::new(50, 60, 80, 40), Some(12));
    assert_eq!(img.dimensions(), (200, 150));
    for (x, y) in [(50, 80), (52, 80), (129, 80), (127, 80), (90, 99)] {
        assert_eq!(*img.get_pixel(x, y), red, "({x}, {y})");
    }
    assert_eq!(*img.get_pixel(53, 80), BACKGROUND);
    // Two digits: 26x18 px above the box.
    let caption: Vec<Rgb<u8>> = (42..60)
        .flat_map(|y| (50..76).map(move |x| (x, y)))
        .map(|(x, y)| *img.get_pixel(x, y))
        .collect();
    assert!(caption.contains(&WHITE) && caption.contains(&red));
    assert_eq!(*img.get_pixel(76, 50), BACKGROUND);

    let plain = mark_action(&shot, Rect::new(50, 60, 80, 40), None);
    assert_eq!(*plain.get_pixel(55, 50), BACKGROUND);
    assert_eq!(*plain.get_pixel(50, 80), red);
    // A widget off the screen leaves the screenshot as it was.
    let off = mark_action(&shot, Rect::new(300, 60, 80, 40), Some(1));
    assert_eq!(&off, shot.pixels());
}

#[test]
fn downscale_keeps_the_aspect_ratio_and_small_images() {
    let img = RgbImage::from_fn(2048, 1024, |x, _| {
        if x < 1024 {
            Rgb([200, 0, 0])
        } else {
            Rgb([0, 0, 200])
        }
    });
    let small = downscale_for_prompt(&img, 1024);
    assert_eq!(small.dimensions(), (1024, 512));
    assert_eq!(*small.get_pixel(100, 100), Rgb([200, 0, 0]));
    assert_eq!(*small.get_pixel(900, 400), Rgb([0, 0, 200]));

    let tall = downscale_for_prompt(&RgbImage::new(1080, 2400), 1000);
    assert_eq!(tall.dimensions(), (450, 1000));

    let already = RgbImage::from_pixel(640, 480, Rgb([1, 2, 3]));
    assert_eq!(downscale_for_prompt(&already, 1024), already);
}

/// A synthetic note-taking screen: a top bar, three buttons, a text field beside a
/// checkbox and a scrollable list of two long-clickable notes.
fn golden_screen() -> (Screenshot, UiHierarchy) {
    let mut img = blank(320, 240);
    let mut paint = |r: Rect, grey: u8| {
        for y in r.y..r.bottom() {
            for x in r.x..r.right() {
                img.put_pixel(x as u32, y as u32, Rgb([grey, grey, grey]));
            }
        }
    };
    paint(Rect::new(0, 0, 320, 28), 90);
    for x in [12, 116, 220] {
        paint(Rect::new(x, 48, 88, 28), 200);
    }
    paint(Rect::new(12, 96, 220, 32), 235);
    paint(Rect::new(252, 100, 24, 24), 170);
    paint(Rect::new(8, 140, 304, 96), 225);
    paint(Rect::new(16, 148, 288, 36), 190);
    paint(Rect::new(16, 192, 288, 36), 190);

    let notes = |text: &str, y: i32| UiElement {
        long_clickable: true,
        ..button(text, Rect::new(16, y, 288, 36))
    };
    let ui = hierarchy(vec![
        element("android.widget.TextView", Rect::new(0, 0, 320, 28)),
        UiElement {
            hint: "menu".into(),
            ..button("", Rect::new(284, 2, 32, 24))
        },
        button("New", Rect::new(12, 48, 88, 28)),
        button("Sort", Rect::new(116, 48, 88, 28)),
        button("Sync", Rect::new(220, 48, 88, 28)),
        UiElement {
            hint: "Search".into(),
            clickable: true,
            editable: true,
            ..element("android.widget.EditText", Rect::new(12, 96, 220, 32))
        },
        UiElement {
            clickable: true,
            checkable: true,
            ..element("android.widget.CheckBox", Rect::new(252, 100, 24, 24))
        },
        UiElement {
            scrollable: true,
            ..element("android.widget.ListView", Rect::new(8, 140, 304, 96))
        },
        notes("Groceries", 148),
        notes("Ideas", 192),
    ]);
    (Screenshot::new(img, 1.0, 0).unwrap(), ui)
}

#[test]
fn annotated_screen_matches_the_golden_image() {
    let (shot, ui) = golden_screen();
    let annotation = annotate(&shot, &ui, &AnnotateConfig::default());
    let ids: Vec<(u32, usize, bool)> = annotation
        .widgets
        .iter()
        .map(|w| (w.id, w.element, w.labelled))
        .collect();
    assert_eq!(
        ids,
        vec![
            (1, 1, true),
            (2, 2, true),
            (3, 3, false),
            (4, 4, false),
            (5, 5, true),
            (6, 6, false),
            (7, 7, true),
            (8, 8, true),
            (9, 9, true),
        ]
    );

    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/annotate/golden.png");
    if std::env::var("GUI_LLM_UPDATE_GOLDEN").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, annotation.to_png().unwrap()).unwrap();
        return;
    }
    let golden = image::open(&path)
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e}; regenerate it with GUI_LLM_UPDATE_GOLDEN=1",
                path.display()
            )
        })
        .into_rgb8();
    assert_eq!(golden.dimensions(), annotation.image.dimensions());
    let differing = golden
        .pixels()
        .zip(annotation.image.pixels())
        .filter(|(a, b)| a != b)
        .count();
    let total = (golden.width() * golden.height()) as usize;
    assert!(
        differing * 200 <= total,
        "{differing} of {total} pixels differ from {}; if the change is intended, \
         regenerate it with GUI_LLM_UPDATE_GOLDEN=1",
        path.display()
    );
}
