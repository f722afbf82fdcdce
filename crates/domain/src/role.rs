//! A seat's role at a team gateway, and what each role may do: one table (`ROLES`) that the
//! gateway's checks, the command line's role names, the dashboard's seat and docs/team.md all
//! read. Adding a role is adding its entry.

/// Something a seat may ask of the gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deed {
    /// Read everything the account shows (the contract's reads, its own journal).
    Read,
    /// Top up an eSIM, within the seat's daily cap.
    TopUp,
    /// Buy new eSIMs, within the seat's daily cap.
    Buy,
    /// Change the company profile.
    EditProfile,
    /// Read every seat's payments in the journal, not only its own.
    ReadTeamJournal,
}

impl Deed {
    /// What the deed is, as a refusal says it ("agent vic (viewer role) may not …").
    pub fn words(self) -> &'static str {
        match self {
            Deed::Read => "read",
            Deed::TopUp => "top up eSIMs",
            Deed::Buy => "buy new eSIMs",
            Deed::EditProfile => "change the company profile",
            Deed::ReadTeamJournal => "read the whole team's journal",
        }
    }
}

/// How a role holds a deed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grant {
    Always(Deed),
    /// Only where the gateway's settings say `support_can_buy = true`.
    WhenSupportCanBuy(Deed),
}

/// One role: its name (as the command line, the store and the seat header spell it), what it
/// is for in words (docs/team.md's table), and its grants.
#[derive(Debug)]
pub struct Entry {
    pub name: &'static str,
    pub summary: &'static str,
    pub grants: &'static [Grant],
}

/// Every role, from the least allowed to the most.
pub static ROLES: &[Entry] = &[
    Entry {
        name: "viewer",
        summary: "read everything the account shows",
        grants: &[Grant::Always(Deed::Read)],
    },
    Entry {
        name: "support",
        summary: "read, and top up within its daily cap; buy new eSIMs only with `support_can_buy = true`",
        grants: &[
            Grant::Always(Deed::Read),
            Grant::Always(Deed::TopUp),
            Grant::WhenSupportCanBuy(Deed::Buy),
        ],
    },
    Entry {
        name: "admin",
        summary: "everything: top-ups, orders, the company profile's change; reads the whole team's journal",
        grants: &[
            Grant::Always(Deed::Read),
            Grant::Always(Deed::TopUp),
            Grant::Always(Deed::Buy),
            Grant::Always(Deed::EditProfile),
            Grant::Always(Deed::ReadTeamJournal),
        ],
    },
];

/// A role of `ROLES`.
#[derive(Clone, Copy)]
pub struct Role(&'static Entry);

impl Role {
    pub const VIEWER: Role = Role::of("viewer");
    pub const SUPPORT: Role = Role::of("support");
    pub const ADMIN: Role = Role::of("admin");

    /// The role of this name in the table, at compile time (a name it lacks does not build).
    const fn of(name: &str) -> Role {
        let mut i = 0;
        while i < ROLES.len() {
            if same(ROLES[i].name.as_bytes(), name.as_bytes()) {
                return Role(&ROLES[i]);
            }
            i += 1;
        }
        panic!("a role constant names no entry of ROLES")
    }

    /// Every role, in the table's order.
    pub fn all() -> impl Iterator<Item = Role> {
        ROLES.iter().map(Role)
    }

    /// Every role's name, in the table's order (the command line's choices).
    pub fn names() -> Vec<&'static str> {
        ROLES.iter().map(|e| e.name).collect()
    }

    /// The role of this name; `None` for a name the table does not know (a newer gateway's).
    pub fn named(name: &str) -> Option<Role> {
        Role::all().find(|r| r.name() == name)
    }

    pub fn name(self) -> &'static str {
        self.0.name
    }

    pub fn summary(self) -> &'static str {
        self.0.summary
    }

    /// Whether the role may do `deed`, where the gateway's settings let support buy or not.
    pub fn may(self, deed: Deed, support_can_buy: bool) -> bool {
        self.0.grants.iter().any(|g| match *g {
            Grant::Always(d) => d == deed,
            Grant::WhenSupportCanBuy(d) => d == deed && support_can_buy,
        })
    }

    /// Whether the role may pay at all (top up or buy), whatever the settings: a seat that
    /// may not is offered no payment.
    pub fn pays(self) -> bool {
        self.may(Deed::TopUp, true) || self.may(Deed::Buy, true)
    }

    /// The roles that may do `deed` in every setting, in words: "support or admin".
    pub fn who_may(deed: Deed) -> String {
        let names: Vec<&str> = Role::all().filter(|r| r.may(deed, true)).map(Role::name).collect();
        match names.split_last() {
            Some((last, [])) => (*last).to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => "no role".to_string(),
        }
    }

    /// docs/team.md's table of roles, as this table says it.
    pub fn markdown_table() -> String {
        let mut table = String::from("| role | may |\n|---|---|\n");
        for role in Role::all() {
            table.push_str(&format!("| `{}` | {} |\n", role.name(), role.summary()));
        }
        table
    }
}

const fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

impl PartialEq for Role {
    fn eq(&self, other: &Role) -> bool {
        self.name() == other.name()
    }
}

impl Eq for Role {}

impl std::fmt::Debug for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Role {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Role::named(s).ok_or_else(|| format!("unknown role {s:?}: use {}", Role::names().join(", ")))
    }
}

impl serde::Serialize for Role {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Role {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_role_reads_and_names_are_unique() {
        let names = Role::names();
        for (i, name) in names.iter().enumerate() {
            assert!(!names[..i].contains(name), "{name} twice");
            let role = Role::named(name).unwrap();
            assert!(role.may(Deed::Read, false), "{name} cannot read");
            assert_eq!(name.parse::<Role>(), Ok(role));
        }
        assert!("root".parse::<Role>().is_err());
    }

    #[test]
    fn the_table_grants_as_docs_team_says() {
        assert!(!Role::VIEWER.pays());
        assert!(Role::SUPPORT.may(Deed::TopUp, false));
        assert!(!Role::SUPPORT.may(Deed::Buy, false));
        assert!(Role::SUPPORT.may(Deed::Buy, true));
        assert!(!Role::SUPPORT.may(Deed::EditProfile, true));
        assert!(Role::ADMIN.may(Deed::ReadTeamJournal, false));
        assert_eq!(Role::who_may(Deed::TopUp), "support or admin");
    }
}
