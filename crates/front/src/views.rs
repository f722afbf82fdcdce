//! Saved views (`[[views]]` in the config file): a name, a tab, and the search, status filter,
//! attention filter or sort it shows, switched to in the dashboard with one key. An entry that
//! is not one is said with its line, and the others (and the dashboard) work all the same. A
//! view saved from the dashboard is appended to the file as such an entry.

/// The tabs a view can be of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewTab {
    Catalog,
    Orders,
    Esims,
}

impl ViewTab {
    pub fn name(self) -> &'static str {
        match self {
            ViewTab::Catalog => "catalog",
            ViewTab::Orders => "orders",
            ViewTab::Esims => "esims",
        }
    }

    fn named(name: &str) -> Option<ViewTab> {
        match name.trim().to_ascii_lowercase().as_str() {
            "catalog" | "plans" => Some(ViewTab::Catalog),
            "orders" => Some(ViewTab::Orders),
            "esims" | "my esims" => Some(ViewTab::Esims),
            _ => None,
        }
    }
}

/// The sorts of the catalog, as a view names them.
pub const SORTS: &[&str] = &["name", "price", "data", "location"];

/// A saved view, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedView {
    pub name: String,
    pub tab: ViewTab,
    /// The search (Orders, My eSIMs) or filter (Catalog) text; empty: none.
    pub search: String,
    /// The status filter (Orders, My eSIMs), as `--status` takes it; `None`: every status.
    pub status: Option<String>,
    /// My eSIMs: only those needing attention.
    pub attention: bool,
    /// Catalog: one of `SORTS`.
    pub sort: Option<String>,
}

const FIELDS: &[&str] = &["name", "tab", "search", "status", "attention", "sort"];

/// The views of the file's `[[views]]` entries (`entries`, each with its first line), and what
/// is wrong with those that are not views, each naming its line.
pub fn read(entries: &[(usize, toml::Table)], file: &str) -> (Vec<SavedView>, Vec<String>) {
    let mut views = Vec::new();
    let mut problems = Vec::new();
    for (line, table) in entries {
        match checked(table) {
            Ok(view) if views.iter().any(|v: &SavedView| v.name == view.name) => problems.push(format!(
                "{file} line {line}: [[views]] {:?} is named twice; the first is kept",
                view.name
            )),
            Ok(view) => views.push(view),
            Err(why) => problems.push(format!("{file} line {line}: [[views]] {why}")),
        }
    }
    (views, problems)
}

fn checked(table: &toml::Table) -> Result<SavedView, String> {
    let text = |key: &str| -> Result<Option<String>, String> {
        match table.get(key) {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(esimdash_domain::text::sanitize(s.trim()).into_owned())),
            Some(other) => Err(format!("{key} = {other} is not text")),
        }
    };
    let name = text("name")?.filter(|n| !n.is_empty()).ok_or("needs a name")?;
    if let Some(unknown) = table.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(format!(
            "{name:?}: {unknown} is not a field of a view ({})",
            FIELDS.join(", ")
        ));
    }
    let tab = text("tab")?.ok_or_else(|| format!("{name:?} needs a tab (catalog, orders, esims)"))?;
    let tab =
        ViewTab::named(&tab).ok_or_else(|| format!("{name:?}: tab = {tab:?} is not a tab (catalog, orders, esims)"))?;
    let attention = match table.get("attention") {
        None => false,
        Some(toml::Value::Boolean(b)) => *b,
        Some(other) => return Err(format!("{name:?}: attention = {other} is not true or false")),
    };
    let view = SavedView {
        search: text("search")?.unwrap_or_default(),
        status: text("status")?.filter(|s| !s.is_empty() && !s.eq_ignore_ascii_case("all")),
        attention,
        sort: text("sort")?.map(|s| s.to_ascii_lowercase()),
        name,
        tab,
    };
    let only = |what: &str, tabs: &str| format!("{:?}: {what} is for {tabs}, not {}", view.name, view.tab.name());
    if view.status.is_some() && view.tab == ViewTab::Catalog {
        return Err(only("status", "orders and esims"));
    }
    if view.attention && view.tab != ViewTab::Esims {
        return Err(only("attention", "esims"));
    }
    match &view.sort {
        Some(_) if view.tab != ViewTab::Catalog => Err(only("sort", "catalog")),
        Some(sort) if !SORTS.contains(&sort.as_str()) => Err(format!(
            "{:?}: sort = {sort:?} is not a sort ({})",
            view.name,
            SORTS.join(", ")
        )),
        _ => Ok(view),
    }
}

/// The view as a `[[views]]` entry of the config file.
pub fn entry(view: &SavedView) -> String {
    let quoted = |s: &str| toml::Value::String(s.to_string()).to_string();
    let mut out = format!(
        "\n[[views]]\nname = {}\ntab = {}\n",
        quoted(&view.name),
        quoted(view.tab.name())
    );
    if !view.search.is_empty() {
        out.push_str(&format!("search = {}\n", quoted(&view.search)));
    }
    if let Some(status) = &view.status {
        out.push_str(&format!("status = {}\n", quoted(status)));
    }
    if view.attention {
        out.push_str("attention = true\n");
    }
    if let Some(sort) = &view.sort {
        out.push_str(&format!("sort = {}\n", quoted(sort)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(text: &str) -> Vec<(usize, toml::Table)> {
        let table: toml::Table = text.parse().unwrap();
        table["views"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, v)| (i + 1, v.as_table().unwrap().clone()))
            .collect()
    }

    #[test]
    fn views_are_checked_and_a_wrong_one_names_its_line_without_stopping_the_others() {
        let (views, problems) = read(
            &entries(
                r#"
                [[views]]
                name = "Japan, ready"
                tab = "esims"
                search = "Japan"
                status = "got_resource"
                [[views]]
                name = "cheap"
                tab = "catalog"
                sort = "cost"
                [[views]]
                name = "near the limit"
                tab = "esims"
                attention = true
                "#,
            ),
            "config.toml",
        );
        assert_eq!(views.len(), 2);
        assert_eq!(views[0].status.as_deref(), Some("got_resource"));
        assert!(views[1].attention);
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0].starts_with("config.toml line 2: [[views]] \"cheap\": sort"),
            "{problems:?}"
        );
    }

    #[test]
    fn a_saved_entry_reads_back_as_the_same_view() {
        let view = SavedView {
            name: "orders \"today\"".into(),
            tab: ViewTab::Orders,
            search: "B100".into(),
            status: Some("in_use".into()),
            attention: false,
            sort: None,
        };
        let (views, problems) = read(&entries(&entry(&view)), "f");
        assert_eq!((views, problems), (vec![view], vec![]));
    }
}
