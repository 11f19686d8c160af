//! The shop's operations that need a permission, each with the one it needs. The API's
//! handlers and the app's commands both name the operation they carry out and take the
//! permission from here ([`Operation::permission`]), so that the server and the till
//! cannot come to ask different things of the same person for the same action; who holds
//! a permission is the table beside it (`Permission::least_role`).

use super::Permission;

/// A write of the shop (or a read kept from some staff) as the API and the app carry it
/// out. Two routes or commands that do the same thing name the same operation: `PUT` and
/// `PATCH` of a pet are both [`Operation::EditPet`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    /// Place an order or a counter sale.
    PlaceOrder,
    /// Change an open order's quantity or ship date, or complete it.
    ChangeOrder,
    /// Cancel an open order, keeping it.
    CancelOrder,
    /// Delete an order.
    DeleteOrder,
    /// Reopen a completed order. The order's plan asks it (`order_plan::plan_by`), as only
    /// the order as it is in the write's transaction says whether a change reopens it.
    ReopenOrder,
    /// Change a pet's stock by a delta with a reason.
    AdjustStock,
    /// Set a pet's stock to a counted number.
    SetStockCount,
    CreatePet,
    /// Replace or patch a pet, its price included.
    EditPet,
    DeletePet,
    /// Add pets (and categories) from a CSV file.
    ImportPets,
    CreateCategory,
    EditCategory,
    DeleteCategory,
    /// Sign in with one's own PIN to approve one action another person was refused.
    Approve,
    /// Read the activity log, on screen or as a CSV file.
    ViewActivity,
    AddStaff,
    /// Change a member's name, role or PIN, or (de)activate them.
    ChangeStaff,
    /// Issue a named API key.
    CreateKey,
    RotateKey,
    RevokeKey,
    /// See the app's local API key: it is the operator's key, which writes as itself.
    ShowLocalApiKey,
    RegenerateLocalApiKey,
    /// Change the shop's settings (currency, time zone, low stock).
    ChangeShopSettings,
    /// Change this till's own settings: which server it follows, its local API, when it
    /// locks itself.
    ChangeTillSettings,
    /// Copy the till's whole database to a file: every customer's name and phone go with it.
    BackUpShop,
}

impl Operation {
    pub const ALL: [Operation; 26] = [
        Operation::PlaceOrder,
        Operation::ChangeOrder,
        Operation::CancelOrder,
        Operation::DeleteOrder,
        Operation::ReopenOrder,
        Operation::AdjustStock,
        Operation::SetStockCount,
        Operation::CreatePet,
        Operation::EditPet,
        Operation::DeletePet,
        Operation::ImportPets,
        Operation::CreateCategory,
        Operation::EditCategory,
        Operation::DeleteCategory,
        Operation::Approve,
        Operation::ViewActivity,
        Operation::AddStaff,
        Operation::ChangeStaff,
        Operation::CreateKey,
        Operation::RotateKey,
        Operation::RevokeKey,
        Operation::ShowLocalApiKey,
        Operation::RegenerateLocalApiKey,
        Operation::ChangeShopSettings,
        Operation::ChangeTillSettings,
        Operation::BackUpShop,
    ];

    /// The permission the operation needs: the only place that says so.
    pub fn permission(self) -> Permission {
        use Operation::*;
        match self {
            PlaceOrder | ChangeOrder | CancelOrder | DeleteOrder => Permission::Sell,
            ReopenOrder => Permission::ReopenOrders,
            AdjustStock => Permission::AdjustStock,
            SetStockCount => Permission::CountStock,
            CreatePet | EditPet | DeletePet | ImportPets | CreateCategory | EditCategory | DeleteCategory => {
                Permission::EditCatalogue
            }
            Approve => Permission::Override,
            ViewActivity => Permission::ViewActivity,
            AddStaff | ChangeStaff => Permission::ManageStaff,
            CreateKey | RotateKey | RevokeKey | ShowLocalApiKey | RegenerateLocalApiKey => {
                Permission::ManageKeys
            }
            ChangeShopSettings | ChangeTillSettings | BackUpShop => Permission::ChangeSettings,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Today's choices, written out once more on purpose: a change to the mapping above
    /// changes who may do what at every till and server, and must be made here too.
    #[test]
    fn each_operation_needs_the_permission_the_shop_chose_for_it() {
        use Operation::*;
        use Permission::*;
        let chosen = [
            (PlaceOrder, Sell),
            (ChangeOrder, Sell),
            (CancelOrder, Sell),
            (DeleteOrder, Sell),
            (ReopenOrder, ReopenOrders),
            (Operation::AdjustStock, Permission::AdjustStock),
            (SetStockCount, CountStock),
            (CreatePet, EditCatalogue),
            (EditPet, EditCatalogue),
            (DeletePet, EditCatalogue),
            (ImportPets, EditCatalogue),
            (CreateCategory, EditCatalogue),
            (EditCategory, EditCatalogue),
            (DeleteCategory, EditCatalogue),
            (Approve, Override),
            (Operation::ViewActivity, Permission::ViewActivity),
            (AddStaff, ManageStaff),
            (ChangeStaff, ManageStaff),
            (CreateKey, ManageKeys),
            (RotateKey, ManageKeys),
            (RevokeKey, ManageKeys),
            (ShowLocalApiKey, ManageKeys),
            (RegenerateLocalApiKey, ManageKeys),
            (ChangeShopSettings, ChangeSettings),
            (ChangeTillSettings, ChangeSettings),
            (BackUpShop, ChangeSettings),
        ];
        assert_eq!(chosen.map(|(operation, _)| operation), Operation::ALL, "every operation, once");
        for (operation, permission) in chosen {
            assert_eq!(operation.permission(), permission, "{operation:?}");
        }
    }

    #[test]
    fn every_permission_is_needed_by_some_operation() {
        for permission in Permission::ALL {
            assert!(
                Operation::ALL.iter().any(|o| o.permission() == permission),
                "{permission} is needed by no operation: a permission nothing asks for"
            );
        }
    }
}
