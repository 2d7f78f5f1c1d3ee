"use client";

import { useEffect, useState } from "react";
import { type ModelPrice, PricesView } from "@/server/protocol";
import { api } from "@/components/transport/client";

type Row = { model: string; input: string; cached_input: string; output: string };

const FIELDS = [
  ["input", "Input"],
  ["cached_input", "Cached input"],
  ["output", "Output"],
] as const;

/**
 * Prices per model, USD per million tokens, for the cost shown in sessions. The user's rows override
 * the built-in defaults for common models (listed below them); a model with neither has no cost ("—").
 */
export function PricesForm() {
  const [rows, setRows] = useState<Row[] | null>(null);
  const [defaults, setDefaults] = useState<Record<string, ModelPrice>>({});
  const [status, setStatus] = useState<string | null>(null);

  useEffect(() => {
    api("/api/v1/settings/prices", PricesView).then(
      (view) => {
        setRows(toRows(view.prices));
        setDefaults(view.defaults);
      },
      (err: Error) => setStatus(err.message),
    );
  }, []);

  const update = (index: number, field: keyof Row, value: string) =>
    setRows((current) => current?.map((row, i) => (i === index ? { ...row, [field]: value } : row)) ?? null);

  const save = async () => {
    if (!rows) return;
    const prices: Record<string, ModelPrice> = {};
    for (const row of rows) {
      if (!row.model.trim()) continue;
      const price = { input: Number(row.input), cached_input: Number(row.cached_input), output: Number(row.output) };
      if (Object.values(price).some((n) => !Number.isFinite(n) || n < 0)) {
        setStatus(`Prices of ${row.model} must be numbers of zero or more.`);
        return;
      }
      prices[row.model.trim()] = price;
    }
    try {
      const view = await api("/api/v1/settings/prices", PricesView, { method: "PUT", body: { prices } });
      setRows(toRows(view.prices));
      setStatus("Saved.");
    } catch (err) {
      setStatus((err as Error).message);
    }
  };

  if (!rows) return status ? <p className="text-danger">{status}</p> : <p className="text-muted">Loading…</p>;
  return (
    <div className="flex flex-col gap-2" data-testid="prices-form">
      <p className="text-xs text-muted">USD per million tokens. Your rows override the defaults below.</p>
      {rows.map((row, index) => (
        <div key={index} className="flex items-center gap-2" data-testid="price-row">
          <input
            className="w-48 rounded border border-border bg-bg px-2 py-1"
            placeholder="model id"
            aria-label="Model id"
            value={row.model}
            onChange={(e) => update(index, "model", e.target.value)}
            data-testid="price-model"
          />
          {FIELDS.map(([field, label]) => (
            <input
              key={field}
              className="w-24 rounded border border-border bg-bg px-2 py-1"
              inputMode="decimal"
              aria-label={label}
              placeholder={label}
              value={row[field]}
              onChange={(e) => update(index, field, e.target.value)}
              data-testid={`price-${field}`}
            />
          ))}
          <button
            type="button"
            className="text-xs text-muted"
            onClick={() => setRows(rows.filter((_, i) => i !== index))}
          >
            Remove
          </button>
        </div>
      ))}
      <div className="flex gap-3 text-xs">
        <button
          type="button"
          className="text-accent"
          onClick={() => setRows([...rows, { model: "", input: "", cached_input: "", output: "" }])}
          data-testid="price-add"
        >
          Add a model
        </button>
        <button type="button" className="text-accent" onClick={() => void save()} data-testid="prices-save">
          Save prices
        </button>
        {status ? (
          <span className="text-muted" data-testid="prices-status">
            {status}
          </span>
        ) : null}
      </div>
      <details className="text-xs text-muted">
        <summary className="cursor-pointer">Defaults</summary>
        <ul className="mt-1">
          {Object.entries(defaults).map(([model, price]) => (
            <li key={model}>
              {model}: ${price.input} in · ${price.cached_input} cached · ${price.output} out
            </li>
          ))}
        </ul>
      </details>
    </div>
  );
}

function toRows(prices: Record<string, ModelPrice>): Row[] {
  return Object.entries(prices).map(([model, price]) => ({
    model,
    input: String(price.input),
    cached_input: String(price.cached_input),
    output: String(price.output),
  }));
}
