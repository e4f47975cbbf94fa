// What a site keeps in a browser beyond its cookies, read from and put back into a page of its
// origin (docs/protocol.md §21, browser_storage_state): its localStorage, and its IndexedDB
// databases with their stores, indexes and records. A record's key and value travel as JSON:
// what JSON cannot hold (a Date, a Blob, a typed array) comes back as JSON made it. The
// shape is Playwright's storageState's (`indexedDB`: databases of `stores` of `records`), whose
// files load here but for values it wrote encoded (`valueEncoded`), which are left out.
(() => {
  const request = (r) =>
    new Promise((done, failed) => {
      r.onsuccess = () => done(r.result);
      r.onerror = () => failed(r.error);
    });
  const finished = (tx) =>
    new Promise((done, failed) => {
      tx.oncomplete = done;
      tx.onerror = () => failed(tx.error);
      tx.onabort = () => failed(tx.error);
    });

  async function readDatabases() {
    const out = [];
    for (const { name } of indexedDB.databases ? await indexedDB.databases() : []) {
      if (!name) continue;
      const db = await request(indexedDB.open(name));
      const stores = [];
      for (const storeName of db.objectStoreNames) {
        const store = db.transaction(storeName, "readonly").objectStore(storeName);
        const [keys, values] = await Promise.all([request(store.getAllKeys()), request(store.getAll())]);
        const indexes = [...store.indexNames].map((indexName) => {
          const index = store.index(indexName);
          return { name: indexName, keyPath: index.keyPath, unique: index.unique, multiEntry: index.multiEntry };
        });
        const records = keys.map((key, i) => ({ key, value: values[i] }));
        stores.push({ name: storeName, keyPath: store.keyPath, autoIncrement: store.autoIncrement, indexes, records });
      }
      out.push({ name, version: db.version, stores });
      db.close();
    }
    return out;
  }

  async function writeDatabases(databases) {
    for (const { name, version, stores } of databases) {
      const open = indexedDB.open(name, version);
      open.onupgradeneeded = () => {
        for (const saved of stores) {
          if (open.result.objectStoreNames.contains(saved.name)) continue;
          const keyPath = saved.keyPath ?? saved.keyPathArray;
          const options = { autoIncrement: !!saved.autoIncrement };
          if (keyPath !== null && keyPath !== undefined) options.keyPath = keyPath;
          const store = open.result.createObjectStore(saved.name, options);
          for (const index of saved.indexes || []) {
            const on = index.keyPath ?? index.keyPathArray;
            store.createIndex(index.name, on, { unique: !!index.unique, multiEntry: !!index.multiEntry });
          }
        }
      };
      const db = await request(open);
      for (const saved of stores) {
        const records = (saved.records || []).filter((r) => "value" in r);
        if (!records.length) continue;
        const tx = db.transaction(saved.name, "readwrite");
        const store = tx.objectStore(saved.name);
        for (const record of records) {
          if (store.keyPath === null) store.put(record.value, record.key);
          else store.put(record.value);
        }
        await finished(tx);
      }
      db.close();
    }
  }

  return {
    read: async () => JSON.stringify({ local: Object.entries(localStorage), indexedDB: await readDatabases() }),
    write: async ({ local, indexedDB: databases }) => {
      for (const [name, value] of local) localStorage.setItem(name, value);
      await writeDatabases(databases || []);
      return local.length;
    },
  };
})()
