//! Staff at the till: who they are, what each role may do (the one permission table), the
//! rules of a PIN and of the lockout after wrong ones, and who made a write (the [`Actor`]
//! every record the shop keeps names). The engines keep the rows; every decision about
//! staff is made here, once.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Name, StaffId, Timestamp};
use crate::error::{Error, ErrorCode, Result};

/// What a staff member is to the shop. Each role may do what the one below it may, and
/// more: a manager all a cashier may, an owner all a manager may.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Cashier,
    Manager,
    Owner,
}

impl Role {
    pub const ALL: [Role; 3] = [Role::Cashier, Role::Manager, Role::Owner];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Cashier => "cashier",
            Role::Manager => "manager",
            Role::Owner => "owner",
        }
    }

    /// Whether this role may do what `permission` allows.
    pub fn may(self, permission: Permission) -> bool {
        self >= permission.least_role()
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Role {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        Role::ALL.into_iter().find(|role| role.as_str() == s).ok_or_else(|| {
            Error::new(
                ErrorCode::ValidationFailed,
                format!("role must be one of cashier, manager, owner; got {s:?}"),
            )
        })
    }
}

/// What a write needs the person making it to be allowed. The table below
/// ([`Permission::least_role`]) is the only place that says who may, as
/// [`Operation::permission`](super::Operation::permission) is the only one that says which
/// permission each operation needs: the API, the app's commands and the till's mirror all
/// ask them, and the contract documents the table.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Permission {
    /// Place orders and counter sales, change, complete and cancel open orders.
    Sell,
    /// Change a pet's stock by a delta with a reason (a delivery, a breakage).
    AdjustStock,
    /// Set a pet's stock to a counted number.
    CountStock,
    /// Create, change and delete pets and categories, prices included.
    EditCatalogue,
    /// Take back completed work: reopen a completed order.
    ReopenOrders,
    /// Approve, with the manager's own PIN, one action a cashier may not do.
    Override,
    /// Read the activity log: who did what and when.
    ViewActivity,
    /// Add staff, change their role, PIN or name, and deactivate them.
    ManageStaff,
    /// Create, rotate and revoke API keys.
    ManageKeys,
    /// Change the shop's settings and which server a till follows, and back a till's
    /// database up.
    ChangeSettings,
}

impl Permission {
    pub const ALL: [Permission; 10] = [
        Permission::Sell,
        Permission::AdjustStock,
        Permission::CountStock,
        Permission::EditCatalogue,
        Permission::ReopenOrders,
        Permission::Override,
        Permission::ViewActivity,
        Permission::ManageStaff,
        Permission::ManageKeys,
        Permission::ChangeSettings,
    ];

    /// The permission table: the least role that holds each permission.
    pub fn least_role(self) -> Role {
        use Permission::*;
        match self {
            Sell => Role::Cashier,
            AdjustStock | CountStock | EditCatalogue | ReopenOrders | Override | ViewActivity => {
                Role::Manager
            }
            ManageStaff | ManageKeys | ChangeSettings => Role::Owner,
        }
    }

    pub fn as_str(self) -> &'static str {
        use Permission::*;
        match self {
            Sell => "sell",
            AdjustStock => "adjust_stock",
            CountStock => "count_stock",
            EditCatalogue => "edit_catalogue",
            ReopenOrders => "reopen_orders",
            Override => "override",
            ViewActivity => "view_activity",
            ManageStaff => "manage_staff",
            ManageKeys => "manage_keys",
            ChangeSettings => "change_settings",
        }
    }
}

impl fmt::Display for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A PIN as typed: 4 to 8 digits. It never leaves the process that checks it except as
/// a slow salted hash, and its `Debug` shows no digit.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct Pin(String);

impl Pin {
    pub const MIN_DIGITS: usize = 4;
    pub const MAX_DIGITS: usize = 8;

    pub fn digits(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for Pin {
    type Error = String;

    fn try_from(pin: String) -> std::result::Result<Self, String> {
        let digits = pin.len();
        if !(Self::MIN_DIGITS..=Self::MAX_DIGITS).contains(&digits)
            || !pin.bytes().all(|b| b.is_ascii_digit())
        {
            return Err(format!(
                "pin must be {} to {} digits (0-9), nothing else",
                Self::MIN_DIGITS,
                Self::MAX_DIGITS
            ));
        }
        Ok(Self(pin))
    }
}

impl fmt::Debug for Pin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Pin(****)")
    }
}

/// Wrong PINs in a row before a staff member is locked out.
pub const PIN_TRIES: u32 = 5;
/// The first lockout; each wrong PIN after it doubles it, up to [`PIN_LOCK_MAX`].
pub const PIN_LOCK: Duration = Duration::from_secs(5 * 60);
pub const PIN_LOCK_MAX: Duration = Duration::from_secs(60 * 60);
/// How long the server waits before it answers a wrong PIN, so that guessing is slow even
/// before the lockout, and a right PIN is answered as fast as it can be.
pub const WRONG_PIN_DELAY: Duration = Duration::from_secs(1);

/// The lockout after the `failures`-th wrong PIN in a row: none for the first few, then
/// [`PIN_LOCK`], doubled for each wrong PIN after that, at most [`PIN_LOCK_MAX`]. A PIN
/// typed right ends the row.
pub fn lock_after(failures: u32) -> Option<Duration> {
    let past = failures.checked_sub(PIN_TRIES)?;
    let doubled = PIN_LOCK.saturating_mul(1_u32.checked_shl(past).unwrap_or(u32::MAX));
    Some(doubled.min(PIN_LOCK_MAX))
}

/// A staff member as the API and the app show them: never the PIN's hash.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StaffMember {
    pub id: StaffId,
    pub name: Name,
    pub role: Role,
    pub active: bool,
    /// Whether a PIN is set. Only the owner an upgrade made has none, until one is set:
    /// a shop of that one owner signs in without a PIN, as it worked before staff.
    pub has_pin: bool,
    /// Until when wrong PINs have locked this member out, if they have.
    pub locked_until: Option<Timestamp>,
    pub created_at: Timestamp,
    pub updated_at: Timestamp,
}

/// A member as a till keeps them to sign staff in while it cannot reach the server
/// (`GET /staff/credentials`, for a till's key): the member and their PIN's argon2id hash,
/// which a till checks a PIN against. Never the proof key (`crate::staff::proof`), which
/// only the server keeps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StaffCredential {
    #[serde(flatten)]
    pub member: StaffMember,
    /// `null` for a member with no PIN (the owner an upgrade made).
    pub pin_hash: Option<String>,
}

/// `POST /staff` (and the app's `create_staff`): a new staff member, with a PIN.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewStaffMember {
    pub name: Name,
    pub role: Role,
    pub pin: Pin,
}

/// `PATCH /staff/{id}` (and the app's `update_staff`): what changes; absent fields stay.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StaffPatch {
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default, deserialize_with = "super::not_null")]
    pub name: Option<Name>,
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default, deserialize_with = "super::not_null")]
    pub role: Option<Role>,
    /// A new PIN; setting one also ends a lockout.
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default, deserialize_with = "super::not_null")]
    pub pin: Option<Pin>,
    #[cfg_attr(feature = "ts", ts(optional))]
    #[serde(default, deserialize_with = "super::not_null")]
    pub active: Option<bool>,
}

/// The shop must always keep an active owner: the one who can manage staff. Refuses a
/// change that would leave none. `owners_left` is the number of active owners the shop
/// would have after the change.
pub fn keep_an_owner(owners_left: u64) -> Result<()> {
    if owners_left == 0 {
        return Err(Error::new(
            ErrorCode::LastOwner,
            "the shop must keep an active owner: make another staff member owner first",
        ));
    }
    Ok(())
}

/// What staff names are compared by: two members may not have names that differ only in
/// case ("Ana" and "ANA"), so that a till's list never shows two of one name.
pub fn staff_name_key(name: &Name) -> String {
    name.as_str().to_lowercase()
}

/// The refusal of a second staff member named `name` (ignoring case).
pub fn duplicate_staff_name(name: &Name) -> Error {
    Error::conflict(
        ErrorCode::DuplicateName,
        format!("a staff member named {:?} already exists", name.as_str()),
    )
}

/// Whether member `id` may sign in with no PIN among the shop's `staff`: only while nobody
/// else is active, as otherwise anyone at a till could pick the member who has none.
pub fn signs_in_without_pin(id: StaffId, staff: &[StaffMember]) -> bool {
    staff.iter().all(|m| !m.active || m.id == id)
}

/// The member a till signs in with no prompt: the shop's one active member, when they have
/// no PIN (a shop its owner runs alone works as it did before staff).
pub fn alone_without_pin(staff: &[StaffMember]) -> Option<StaffId> {
    staff.iter().find(|m| m.active && !m.has_pin && signs_in_without_pin(m.id, staff)).map(|m| m.id)
}

/// A member with no PIN (the owner an upgrade made) signs in without one only while alone:
/// adding anyone beside them would leave nobody able to sign in as them. Refuses to add a
/// member to `members` while an active one has no PIN.
pub fn may_add_staff(members: &[StaffMember]) -> Result<()> {
    match members.iter().find(|m| m.active && !m.has_pin) {
        Some(pinless) => Err(Error::new(
            ErrorCode::PinRequired,
            format!(
                "set a PIN for {} first (staff member {}): once the shop has other staff, everyone \
                 signs in with a PIN",
                pinless.name.as_str(),
                pinless.id
            ),
        )),
        None => Ok(()),
    }
}

/// A staff member as a record names them: the id, and the name and role they had then.
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StaffRef {
    pub id: StaffId,
    pub name: Name,
    pub role: Role,
}

/// Who made a write, as every record the shop keeps names it: the staff member signed in
/// (and the manager who approved it, for an override), and the API key it came with. A
/// key acting as itself (a script) has no staff; `key` is `None` for the operator's own
/// key, which the server and the desktop app hold. A record made before the shop kept
/// staff has no actor at all (`null` on the wire).
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Actor {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub staff: Option<StaffRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_by: Option<StaffRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

impl Actor {
    /// The operator's key acting as itself: the server's own key, or the desktop app in a
    /// shop that keeps no staff but its owner.
    pub fn operator() -> Self {
        Self::default()
    }

    /// A named key acting as itself.
    pub fn key(name: impl Into<String>) -> Self {
        Self { key: Some(name.into()), ..Self::default() }
    }

    /// Whether the actor may do what `permission` allows: a staff member's role decides, or
    /// the approving manager's for an override. A key acting as itself was let in by its
    /// scope at the edge, which is its whole check.
    pub fn may(&self, permission: Permission) -> bool {
        match &self.staff {
            None => true,
            Some(staff) => {
                staff.role.may(permission)
                    || self.approved_by.as_ref().is_some_and(|manager| {
                        manager.role.may(Permission::Override) && manager.role.may(permission)
                    })
            }
        }
    }

    /// Refuses with `permission_denied`, naming who and what, unless [`Actor::may`].
    pub fn check(&self, permission: Permission) -> Result<()> {
        if self.may(permission) {
            return Ok(());
        }
        let staff = self.staff.as_ref().expect("only a staff member is ever refused");
        Err(Error::new(
            ErrorCode::PermissionDenied,
            format!(
                "{} {} may not {}: that needs the {} permission ({} or above), or a manager's approval",
                staff.role,
                staff.name.as_str(),
                permission.describe(),
                permission,
                permission.least_role()
            ),
        ))
    }
}

impl Permission {
    /// What it allows, in words for a refusal: "cashier Ana may not set stock counts".
    fn describe(self) -> &'static str {
        use Permission::*;
        match self {
            Sell => "sell or take orders",
            AdjustStock => "change stock",
            CountStock => "set stock counts",
            EditCatalogue => "change pets, categories or prices",
            ReopenOrders => "reopen completed orders",
            Override => "approve another person's action",
            ViewActivity => "read the activity log",
            ManageStaff => "manage staff",
            ManageKeys => "manage API keys",
            ChangeSettings => "change the shop's settings",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(id: i64, active: bool, has_pin: bool) -> StaffMember {
        StaffMember {
            id: StaffId::try_from(id).unwrap(),
            name: Name::try_from(format!("M{id}")).unwrap(),
            role: Role::Owner,
            active,
            has_pin,
            locked_until: None,
            created_at: Timestamp::now(),
            updated_at: Timestamp::now(),
        }
    }

    #[test]
    fn a_member_without_a_pin_signs_in_alone_and_only_alone() {
        let one = StaffId::try_from(1).unwrap();
        let owner = member(1, true, false);
        assert_eq!(alone_without_pin(std::slice::from_ref(&owner)), Some(one));
        assert!(signs_in_without_pin(one, std::slice::from_ref(&owner)));
        // Someone gone does not count; someone active does, with a PIN or not.
        assert_eq!(alone_without_pin(&[owner.clone(), member(2, false, true)]), Some(one));
        for other in [member(2, true, true), member(2, true, false)] {
            assert_eq!(alone_without_pin(&[owner.clone(), other.clone()]), None);
            assert!(!signs_in_without_pin(one, &[owner.clone(), other]));
        }
        // The one member with a PIN types it; a shop with nobody active has no one to sign in.
        assert_eq!(alone_without_pin(&[member(1, true, true)]), None);
        assert_eq!(alone_without_pin(&[member(1, false, false)]), None);
    }

    fn person(role: Role) -> StaffRef {
        StaffRef { id: StaffId::try_from(1).unwrap(), name: Name::try_from("Ana".to_owned()).unwrap(), role }
    }

    #[test]
    fn each_role_holds_what_the_one_below_holds_and_more() {
        for permission in Permission::ALL {
            let holders: Vec<Role> = Role::ALL.into_iter().filter(|role| role.may(permission)).collect();
            assert!(holders.contains(&Role::Owner), "the owner may {permission}");
            assert!(!holders.is_empty() && holders.windows(2).all(|w| w[0] < w[1]));
        }
        assert!(Role::Cashier.may(Permission::Sell));
        assert!(!Role::Cashier.may(Permission::CountStock));
        assert!(Role::Manager.may(Permission::CountStock));
        assert!(!Role::Manager.may(Permission::ManageStaff));
    }

    #[test]
    fn a_cashier_is_refused_by_name_and_a_managers_approval_lets_the_one_action_through() {
        let cashier = Actor { staff: Some(person(Role::Cashier)), ..Actor::default() };
        let refusal = cashier.check(Permission::CountStock).unwrap_err();
        assert_eq!(refusal.code, ErrorCode::PermissionDenied);
        assert!(refusal.message.contains("cashier Ana may not set stock counts"), "{}", refusal.message);
        assert!(refusal.message.contains("count_stock"), "{}", refusal.message);

        let approved = Actor { approved_by: Some(person(Role::Manager)), ..cashier.clone() };
        assert!(approved.may(Permission::CountStock));
        assert!(!approved.may(Permission::ManageStaff), "a manager approves only what a manager may do");
        let by_a_cashier = Actor { approved_by: Some(person(Role::Cashier)), ..cashier };
        assert!(!by_a_cashier.may(Permission::CountStock), "only a role that may override approves");
        assert!(Actor::key("script").may(Permission::ManageStaff), "a key's scope was its check");
    }

    #[test]
    fn a_pin_is_four_to_eight_digits_and_never_printed() {
        for good in ["0000", "12345678", "0042"] {
            assert!(Pin::try_from(good.to_owned()).is_ok(), "{good}");
        }
        for bad in ["123", "123456789", "12a4", " 1234", "１２３４", ""] {
            assert!(Pin::try_from(bad.to_owned()).is_err(), "{bad:?}");
        }
        assert_eq!(format!("{:?}", Pin::try_from("1234".to_owned()).unwrap()), "Pin(****)");
    }

    #[test]
    fn the_lockout_starts_after_the_tries_and_doubles_up_to_an_hour() {
        assert_eq!(lock_after(0), None);
        assert_eq!(lock_after(PIN_TRIES - 1), None);
        assert_eq!(lock_after(PIN_TRIES), Some(PIN_LOCK));
        assert_eq!(lock_after(PIN_TRIES + 1), Some(PIN_LOCK * 2));
        assert_eq!(lock_after(PIN_TRIES + 3), Some(PIN_LOCK * 8));
        assert_eq!(lock_after(PIN_TRIES + 4), Some(PIN_LOCK_MAX));
        assert_eq!(lock_after(u32::MAX), Some(PIN_LOCK_MAX));
    }

    #[test]
    fn nobody_is_added_beside_an_active_member_without_a_pin() {
        let refused = may_add_staff(&[member(1, true, false)]).unwrap_err();
        assert_eq!(refused.code, ErrorCode::PinRequired);
        assert!(
            refused.message.starts_with("set a PIN for M1 first (staff member 1)"),
            "{}",
            refused.message
        );
        assert!(may_add_staff(&[member(1, true, true)]).is_ok());
        assert!(
            may_add_staff(&[member(1, false, false), member(2, true, true)]).is_ok(),
            "inactive: signs in never"
        );
    }

    #[test]
    fn the_shop_keeps_an_owner() {
        assert_eq!(keep_an_owner(0).unwrap_err().code, ErrorCode::LastOwner);
        assert!(keep_an_owner(1).is_ok());
    }
}
