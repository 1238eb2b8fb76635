// The shopping cart shown in the web shop.

export interface Line {
  sku: string;
  name: string;
  quantity: number;
  priceCents: number;
}

export class Cart {
  private lines: Line[] = [];

  /**
   * Add a line, merging it with a line of the same SKU.
   */
  add(line: Line): void {
    const existing = this.lines.find((l) => l.sku === line.sku);
    if (existing) {
      existing.quantity += line.quantity;
    } else {
      this.lines.push(line);
    }
  }

  /**
   * Drop every line of a SKU.
   */
  remove(sku: string): void {
    this.lines = this.lines.filter((l) => l.sku !== sku);
  }

  /**
   * The sum of all lines, in cents.
   */
  totalCents(): number {
    let total = 0;
    for (const l of this.lines) {
      total += l.quantity * l.priceCents;
    }
    return total;
  }

  /**
   * The total as the shop displays it.
   */
  format(): string {
    return "$" + (this.totalCents() / 100).toFixed(2);
  }
}
