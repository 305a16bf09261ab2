-- A jsonb "integer with history" type for the balances: {"v": current, "h": [older values]}.
-- Re-runnable: functions are replaced, columns converted only while they are still integers.
CREATE OR REPLACE FUNCTION hist_new(v integer) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$ SELECT jsonb_build_object('v', v, 'h', '[]'::jsonb) $$;

CREATE OR REPLACE FUNCTION hist_add(x jsonb, delta integer) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_build_object('v', (x->>'v')::integer + delta, 'h', (x->'h') || to_jsonb((x->>'v')::integer))
$$;

CREATE OR REPLACE FUNCTION hist_value(x jsonb) RETURNS integer
LANGUAGE sql IMMUTABLE AS $$ SELECT (x->>'v')::integer $$;

DO $$
DECLARE t text; c text;
BEGIN
  FOR t, c IN VALUES ('pgbench_accounts', 'abalance'), ('pgbench_tellers', 'tbalance'), ('pgbench_branches', 'bbalance') LOOP
    IF (SELECT data_type FROM information_schema.columns WHERE table_name = t AND column_name = c) = 'integer' THEN
      EXECUTE format('ALTER TABLE %I ALTER COLUMN %I TYPE jsonb USING hist_new(%I)', t, c, c);
    END IF;
  END LOOP;
END $$;
