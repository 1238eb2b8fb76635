//! Stock keeping for the shop: items by SKU, stock movements, and the value on the shelves.

use std::collections::HashMap;

/// One product line in the warehouse.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub sku: String,
    pub name: String,
    pub quantity: u32,
    pub price_cents: u64,
}

/// The warehouse: items by SKU.
#[derive(Debug, Default)]
pub struct Inventory {
    items: HashMap<String, Item>,
}

impl Inventory {
    pub fn new() -> Self {
        Self::default()
    }

    /// Add an item, replacing any item with the same SKU.
    pub fn add(&mut self, item: Item) {
        self.items.insert(item.sku.clone(), item);
    }

    /// Take `quantity` units of `sku` out of stock.
    pub fn remove(&mut self, sku: &str, quantity: u32) -> Result<(), String> {
        let item = self.items.get_mut(sku).ok_or("unknown sku")?;
        if item.quantity < quantity {
            return Err("not enough stock".to_string());
        }
        item.quantity -= quantity;
        Ok(())
    }

    /// The value of everything in stock, in cents.
    pub fn total_value(&self) -> u64 {
        let mut total = 0;
        for item in self.items.values() {
            total += item.price_cents * item.quantity as u64;
        }
        total
    }
}
