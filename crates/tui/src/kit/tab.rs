//! The tabs, as the bar names them, and where their titles sit on the tab bar (the view draws them there; a mouse
//! click is matched against the same positions).

use strum::IntoEnumIterator;

/// The bar's order is the declaration's: the list of tabs is derived from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::EnumIter, strum::EnumCount)]
pub enum Tab {
    Catalog,
    Orders,
    Esims,
    Profile,
}

impl Tab {
    fn nth(index: usize) -> Tab {
        Tab::iter()
            .nth(index % <Tab as strum::EnumCount>::COUNT)
            .unwrap_or(Tab::Catalog)
    }

    pub fn title(self) -> &'static str {
        match self {
            Tab::Catalog => "Catalog",
            Tab::Orders => "Orders",
            Tab::Esims => "My eSIMs",
            Tab::Profile => "Profile",
        }
    }

    /// The action that shows the tab (its number key): a tab added without one does not
    /// compile.
    pub fn action(self) -> crate::keymap::Action {
        use crate::keymap::Action;
        match self {
            Tab::Catalog => Action::TabCatalog,
            Tab::Orders => Action::TabOrders,
            Tab::Esims => Action::TabEsims,
            Tab::Profile => Action::TabProfile,
        }
    }

    fn index(self) -> usize {
        Tab::iter().position(|t| t == self).unwrap_or(0)
    }

    pub fn next(self) -> Tab {
        Tab::nth(self.index() + 1)
    }

    pub fn previous(self) -> Tab {
        Tab::nth(self.index() + <Tab as strum::EnumCount>::COUNT - 1)
    }

    /// The label on the tab bar: ` 1 Catalog `, or with the tab's badge ` 3 My eSIMs (! 4) `.
    pub fn label(self, badge: Option<String>) -> String {
        match badge {
            Some(badge) => format!(" {} {} {badge} ", self.index() + 1, self.title()),
            None => format!(" {} {} ", self.index() + 1, self.title()),
        }
    }

    /// Each tab's columns on the bar, the labels one after another from column 0.
    pub fn bar_positions(labels: &[(Tab, String)]) -> Vec<(Tab, u16, u16)> {
        let mut x = 0u16;
        labels
            .iter()
            .map(|(t, label)| {
                let width = unicode_width::UnicodeWidthStr::width(label.as_str()) as u16;
                let span = (*t, x, x + width);
                x += width + 1;
                span
            })
            .collect()
    }

    pub fn at_column(labels: &[(Tab, String)], column: u16) -> Option<Tab> {
        Tab::bar_positions(labels)
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
        let labels: Vec<_> = Tab::iter().map(|t| (t, t.label(None))).collect();
        assert_eq!(Tab::at_column(&labels, 0), Some(Tab::Catalog));
        let (_, start, _) = Tab::bar_positions(&labels)[2];
        assert_eq!(Tab::at_column(&labels, start + 2), Some(Tab::Esims));
        assert_eq!(Tab::at_column(&labels, 500), None);
    }
}
