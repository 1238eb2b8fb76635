mod inventory;

use inventory::{Inventory, Item};

fn main() {
    let mut stock = Inventory::new();
    stock.add(Item {
        sku: "TEA-001".into(),
        name: "Green tea, 100 g".into(),
        quantity: 40,
        price_cents: 650,
    });
    stock.add(Item {
        sku: "MUG-002".into(),
        name: "Stoneware mug".into(),
        quantity: 12,
        price_cents: 1800,
    });
    stock.remove("TEA-001", 3).expect("in stock");
    println!("stock value: {} cents", stock.total_value());
}
