//! The four tabs and where their titles sit on the tab bar (the view draws them there; a mouse
//! click is matched against the same positions).

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tab {
    Catalog,
    Orders,
    Esims,
    Profile,
}

impl Tab {
    pub const ALL: [Tab; 4] = [Tab::Catalog, Tab::Orders, Tab::Esims, Tab::Profile];

    pub fn title(self) -> &'static str {
        match self {
            Tab::Catalog => "Catalog",
            Tab::Orders => "Orders",
            Tab::Esims => "My eSIMs",
            Tab::Profile => "Profile",
        }
    }

    fn index(self) -> usize {
        Tab::ALL.iter().position(|t| *t == self).unwrap_or(0)
    }

    pub fn next(self) -> Tab {
        Tab::ALL[(self.index() + 1) % Tab::ALL.len()]
    }

    pub fn previous(self) -> Tab {
        Tab::ALL[(self.index() + Tab::ALL.len() - 1) % Tab::ALL.len()]
    }

    /// The label on the tab bar: ` 1 Catalog `.
    pub fn label(self) -> String {
        format!(" {} {} ", self.index() + 1, self.title())
    }

    /// Each tab's columns on the bar, labels one after another from column 0.
    pub fn bar_positions() -> Vec<(Tab, u16, u16)> {
        let mut x = 0u16;
        Tab::ALL
            .iter()
            .map(|t| {
                let width = t.label().chars().count() as u16;
                let span = (*t, x, x + width);
                x += width + 1;
                span
            })
            .collect()
    }

    pub fn at_column(column: u16) -> Option<Tab> {
        Tab::bar_positions()
            .into_iter()
            .find(|(_, start, end)| (*start..*end).contains(&column))
            .map(|(t, _, _)| t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_and_hit_tests() {
        assert_eq!(Tab::Profile.next(), Tab::Catalog);
        assert_eq!(Tab::Catalog.previous(), Tab::Profile);
        assert_eq!(Tab::at_column(0), Some(Tab::Catalog));
        let (_, start, _) = Tab::bar_positions()[2];
        assert_eq!(Tab::at_column(start + 2), Some(Tab::Esims));
        assert_eq!(Tab::at_column(500), None);
    }
}
